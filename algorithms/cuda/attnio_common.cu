// attnio CUDA kernels: the portability layer, the storage types and the global-memory I/O counter.
//
// The same text compiles three ways: with NVRTC through cupy.RawModule (kernels.py), with nvcc for
// sm_80/sm_90 in CI (tests/test_cuda.py), and with g++ as plain C++ for the CPU emulator
// (ATTNIO_HOST_EMULATION, emulate.py), which runs each thread of a block as a std::thread.
//
// Fast memory is the thread block's dynamic shared memory, one float32 per model word, whatever the
// input dtype (float32 accumulation): M words = 4·M bytes. Slow memory is global memory; one word is one
// element of the array it belongs to (2 bytes for float16/bfloat16 inputs and outputs, 4 bytes for the
// float32 scratch arrays L, A and the row sums).
//
// Every global-memory access of every kernel goes through ATTNIO_LOAD / ATTNIO_STORE. In the instrumented
// build (-DATTNIO_COUNT_IO) each executed access adds one word to a per-thread counter, and each thread
// adds its two counters (reads, writes) to io_counter[0], io_counter[1] once at the end. The timed build
// compiles the counter away.

#if defined(ATTNIO_HOST_EMULATION)
// The emulator (emulate.cpp) defines ATTNIO_GLOBAL, ATTNIO_DEVICE, ATTNIO_TID, ATTNIO_NTHREADS,
// ATTNIO_BLOCK, ATTNIO_SYNC, ATTNIO_SHARED, ATTNIO_ATOMIC_ADD_U64, ATTNIO_NEG_INF, attnio_u2f,
// attnio_f2u, attnio_half_to_f32 and attnio_f32_to_half before including this file.
#else
#define ATTNIO_GLOBAL __global__
#define ATTNIO_DEVICE __device__ __forceinline__
#define ATTNIO_TID ((int)threadIdx.x)
#define ATTNIO_NTHREADS ((int)blockDim.x)
#define ATTNIO_BLOCK ((int)blockIdx.x)
#define ATTNIO_SYNC() __syncthreads()
#define ATTNIO_SHARED(name) extern __shared__ float name[]
#define ATTNIO_ATOMIC_ADD_U64(ptr, v) atomicAdd((ptr), (v))
#define ATTNIO_NEG_INF (__int_as_float(0xff800000))
ATTNIO_DEVICE float attnio_u2f(unsigned int u) { return __uint_as_float(u); }
ATTNIO_DEVICE unsigned int attnio_f2u(float f) { return __float_as_uint(f); }
// No cuda_fp16.h / cuda_bf16.h: NVRTC and nvcc need no include paths, and the emulator can mirror it.
ATTNIO_DEVICE float attnio_half_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
ATTNIO_DEVICE unsigned short attnio_f32_to_half(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#endif

// Storage types: 16-bit patterns; arithmetic is always float32.
struct attnio_half { unsigned short bits; };
struct attnio_bfloat16 { unsigned short bits; };

ATTNIO_DEVICE int attnio_min(int a, int b) { return a < b ? a : b; }
ATTNIO_DEVICE int attnio_max(int a, int b) { return a > b ? a : b; }

ATTNIO_DEVICE float attnio_to_f32(float x) { return x; }
ATTNIO_DEVICE float attnio_to_f32(attnio_half x) { return attnio_half_to_f32(x.bits); }
ATTNIO_DEVICE float attnio_to_f32(attnio_bfloat16 x) { return attnio_u2f(((unsigned int)x.bits) << 16); }

ATTNIO_DEVICE void attnio_put(float* p, float v) { *p = v; }
ATTNIO_DEVICE void attnio_put(attnio_half* p, float v) { p->bits = attnio_f32_to_half(v); }
ATTNIO_DEVICE void attnio_put(attnio_bfloat16* p, float v) {
  unsigned int u = attnio_f2u(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p->bits = (unsigned short)0x7fc0u;  // NaN stays NaN
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
    p->bits = (unsigned short)(u >> 16);
  }
}

#ifdef ATTNIO_COUNT_IO
#define ATTNIO_IO_COUNTERS unsigned long long attnio_reads_words = 0ull, attnio_writes_words = 0ull
#define ATTNIO_COUNT_READ() (++attnio_reads_words)
#define ATTNIO_COUNT_WRITE() (++attnio_writes_words)
#define ATTNIO_IO_FLUSH(counter)                                                               \
  do {                                                                                         \
    if (attnio_reads_words) ATTNIO_ATOMIC_ADD_U64(&(counter)[0], attnio_reads_words);          \
    if (attnio_writes_words) ATTNIO_ATOMIC_ADD_U64(&(counter)[1], attnio_writes_words);        \
  } while (0)
#else
#define ATTNIO_IO_COUNTERS \
  do {                     \
  } while (0)
#define ATTNIO_COUNT_READ() ((void)0)
#define ATTNIO_COUNT_WRITE() ((void)0)
#define ATTNIO_IO_FLUSH(counter) ((void)(counter))
#endif

// One global word read into fast memory (as float32) / one fast-memory float32 written to a global word.
#define ATTNIO_LOAD(ptr) (ATTNIO_COUNT_READ(), attnio_to_f32(*(ptr)))
#define ATTNIO_STORE(ptr, value) (ATTNIO_COUNT_WRITE(), attnio_put((ptr), (value)))
