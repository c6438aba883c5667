// CPU emulator for the attnio CUDA kernels: runs the kernel source as plain C++, one std::thread per CUDA
// thread of a block, __syncthreads as a std::barrier, blocks one after another. Used by tests/test_cuda.py
// (through algorithms/cuda/emulate.py) to check, without a GPU, that the kernels' in-kernel word counts
// equal the model's, that their output matches the float64 reference, that no thread reads or writes past
// the shared-memory budget (built with AddressSanitizer) and that no two threads race on shared memory
// between barriers (built with ThreadSanitizer). It says nothing about warp scheduling or GPU speed.
//
// Usage: emulate KERNEL DTYPE N d dv B_r B_c scale threads smem_words in.bin out.bin
//   KERNEL flash2 | square (square uses B_r as B and ignores B_c); DTYPE f32 | f16 | bf16;
//   smem_words: the shared-memory budget of the launch plan (float32 words), allocated exactly.
//   in.bin: Q (N·d) | K (N·d) | V (N·dv), raw elements of DTYPE.
//   out.bin: O (N·dv, DTYPE) | L, the row logsumexps (N, float32) | reads, writes (2 × uint64).

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static thread_local int attnio_emu_tid = 0;
static thread_local int attnio_emu_block = 0;
static thread_local float* attnio_emu_smem = nullptr;
static int attnio_emu_nthreads = 1;
static std::barrier<>* attnio_emu_barrier = nullptr;

#define ATTNIO_HOST_EMULATION 1
#define ATTNIO_GLOBAL
#define ATTNIO_DEVICE static inline
#define ATTNIO_TID (attnio_emu_tid)
#define ATTNIO_NTHREADS (attnio_emu_nthreads)
#define ATTNIO_BLOCK (attnio_emu_block)
#define ATTNIO_SYNC() attnio_emu_barrier->arrive_and_wait()
#define ATTNIO_SHARED(name) float* name = attnio_emu_smem
#define ATTNIO_ATOMIC_ADD_U64(ptr, v) __atomic_fetch_add((ptr), (v), __ATOMIC_RELAXED)
#define ATTNIO_NEG_INF (-INFINITY)
static inline float attnio_u2f(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline unsigned int attnio_f2u(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
static inline float attnio_half_to_f32(unsigned short h) { _Float16 x; std::memcpy(&x, &h, 2); return (float)x; }
static inline unsigned short attnio_f32_to_half(float f) { _Float16 x = (_Float16)f; unsigned short h; std::memcpy(&h, &x, 2); return h; }

#include "attnio_common.cu"
#include "flash2.cu"
#include "square_tiling.cu"

// One launch: `threads` std::threads, each running its thread of every block in turn; a barrier after each
// block keeps blocks apart (as if they ran one after another). Each block gets its own shared memory, sized
// exactly (AddressSanitizer catches any access past it) and filled with NaN, as garbage would be on a GPU: a
// read of a word no thread wrote shows up in the output.
template <class F>
static void launch(int blocks, int threads, size_t smem_words, F body) {
  attnio_emu_nthreads = threads;
  std::vector<std::vector<float>> smem(blocks, std::vector<float>(smem_words, NAN));
  std::barrier<> bar(threads);
  attnio_emu_barrier = &bar;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t, blocks, &smem, &bar, &body] {
      attnio_emu_tid = t;
      for (int b = 0; b < blocks; ++b) {
        attnio_emu_block = b;
        attnio_emu_smem = smem[b].data();
        body();
        bar.arrive_and_wait();
      }
    });
  for (auto& th : pool) th.join();
}

template <class T>
static int run(const std::string& kernel, int N, int d, int dv, int Br, int Bc, float scale, int threads,
               size_t words, FILE* in, FILE* out) {
  std::vector<T> Q((size_t)N * d), K((size_t)N * d), V((size_t)N * dv), O((size_t)N * dv);
  if (fread(Q.data(), sizeof(T), Q.size(), in) != Q.size() || fread(K.data(), sizeof(T), K.size(), in) != K.size() ||
      fread(V.data(), sizeof(T), V.size(), in) != V.size()) {
    fprintf(stderr, "short input\n");
    return 2;
  }
  std::memset(O.data(), 0xff, O.size() * sizeof(T));  // poison: NaN in every dtype
  std::vector<float> stat((size_t)N, NAN);
  unsigned long long counter[2] = {0ull, 0ull};
  if (kernel == "flash2") {
    const int Tr = (N + Br - 1) / Br;
    launch(Tr, threads, words, [&] {
      flash2_fwd<T>(Q.data(), K.data(), V.data(), O.data(), stat.data(), N, d, dv, Br, Bc, scale, counter);
    });
  } else if (kernel == "square") {
    const int B = Br, T_ = (N + B - 1) / B;
    std::vector<float> S((size_t)N * N, NAN);  // logits, slow-memory scratch
    launch(T_, threads, words, [&] {
      square_tiling_phase1<T>(Q.data(), K.data(), S.data(), stat.data(), N, d, B, scale, counter);
    });
    launch(T_, threads, words, [&] {
      square_tiling_phase2<T>(S.data(), stat.data(), V.data(), O.data(), N, dv, B, counter);
    });
  } else {
    fprintf(stderr, "unknown kernel %s\n", kernel.c_str());
    return 2;
  }
  fwrite(O.data(), sizeof(T), O.size(), out);
  fwrite(stat.data(), sizeof(float), stat.size(), out);
  fwrite(counter, sizeof(unsigned long long), 2, out);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 13) {
    fprintf(stderr, "usage: emulate KERNEL DTYPE N d dv B_r B_c scale threads smem_words in.bin out.bin\n");
    return 2;
  }
  const std::string kernel = argv[1], dtype = argv[2];
  const int N = atoi(argv[3]), d = atoi(argv[4]), dv = atoi(argv[5]), Br = atoi(argv[6]), Bc = atoi(argv[7]);
  const float scale = (float)atof(argv[8]);
  const int threads = atoi(argv[9]);
  const size_t words = (size_t)atoll(argv[10]);
  FILE* in = fopen(argv[11], "rb");
  FILE* out = fopen(argv[12], "wb");
  if (!in || !out) {
    fprintf(stderr, "cannot open files\n");
    return 2;
  }
  int rc = 2;
  if (dtype == "f32") rc = run<float>(kernel, N, d, dv, Br, Bc, scale, threads, words, in, out);
  else if (dtype == "f16") rc = run<attnio_half>(kernel, N, d, dv, Br, Bc, scale, threads, words, in, out);
  else if (dtype == "bf16") rc = run<attnio_bfloat16>(kernel, N, d, dv, Br, Bc, scale, threads, words, in, out);
  else fprintf(stderr, "unknown dtype %s\n", dtype.c_str());
  fclose(in);
  fclose(out);
  return rc;
}
