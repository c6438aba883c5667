// Saha–Ye SquareTilingAttention (arXiv 2402.07443, Algorithm 1), forward, as two kernels (the phases):
// Phase 2 reads A and the row sums that Phase 1 wrote to global memory, so a grid-wide barrier (the
// launch boundary) separates them, as slow memory separates them in the model.
//
// One tile side B = ⌊√(M/4)⌋ for everything; T = ⌈N/B⌉ thread blocks per phase; block i owns rows
// [i·B, i·B + b_i) (b = B except the last tile of a dimension).
//
// Phase 1 (square_tiling_phase1), block i:
//   D_i ← 0 (b_i words, shared)
//   for j in 1..⌈N/B⌉:  A_ij ← 0 (b_i×b_j, shared)
//     for ℓ in 1..⌈d/B⌉:  load Q[i,ℓ] (b_i×b_ℓ) and K[j,ℓ] (b_j×b_ℓ); A_ij += Q[i,ℓ]·K[j,ℓ]ᵀ
//     A_ij ← exp(scale·A_ij); write A_ij to global (b_i·b_j words); D_i += rowsum A_ij
//   write D_i (b_i words)
// Phase 2 (square_tiling_phase2), block i:
//   load D_i (b_i words)
//   for j in 1..⌈dv/B⌉:  O_ij ← 0 (b_i×b_j, shared)
//     for k in 1..⌈N/B⌉:  load A[i,k] (b_i×b_k) and V[k,j] (b_k×b_j); O_ij += diag(D_i)⁻¹ A[i,k] V[k,j]
//     write O_ij (b_i·b_j words)
//
// Shared memory (float32 words) in each phase: three B×B tiles and one B-vector, 3B² + B ≤ 4B² ≤ M.
// Global words (T = ⌈N/B⌉): reads T·N·d (Q) + T·N·d (K) + N (D) + ⌈dv/B⌉·N² (A) + T·N·dv (V);
// writes N² (A) + N (D) + N·dv (O). A and D are float32 scratch arrays in global memory.
// As published, A = exp(scale·QKᵀ) is not row-stabilised: inputs with |scale·q·k| > 88 overflow float32.

template <class T>
ATTNIO_GLOBAL void square_tiling_phase1(const T* __restrict__ Q, const T* __restrict__ K,
                                        float* __restrict__ A, float* __restrict__ D, int N, int d, int B,
                                        float scale, unsigned long long* io_counter) {
  ATTNIO_SHARED(smem);
  ATTNIO_IO_COUNTERS;
  const int tid = ATTNIO_TID, nt = ATTNIO_NTHREADS;
  const int i0 = ATTNIO_BLOCK * B;
  const int bi = attnio_min(B, N - i0);
  float* Qt = smem;        // B·B: Q[i,ℓ]
  float* Kt = Qt + B * B;  // B·B: K[j,ℓ]
  float* At = Kt + B * B;  // B·B: A_ij
  float* Di = At + B * B;  // B: row sums D_i

  for (int r = tid; r < bi; r += nt) Di[r] = 0.f;
  for (int j0 = 0; j0 < N; j0 += B) {
    const int bj = attnio_min(B, N - j0);
    for (int e = tid; e < bi * bj; e += nt) At[e] = 0.f;
    for (int l0 = 0; l0 < d; l0 += B) {
      const int bl = attnio_min(B, d - l0);
      for (int e = tid; e < bi * bl; e += nt) {  // Q[i,ℓ]: b_i·b_ℓ reads
        const int r = e / bl, c = e - r * bl;
        Qt[e] = ATTNIO_LOAD(Q + (long long)(i0 + r) * d + l0 + c);
      }
      for (int e = tid; e < bj * bl; e += nt) {  // K[j,ℓ]: b_j·b_ℓ reads
        const int r = e / bl, c = e - r * bl;
        Kt[e] = ATTNIO_LOAD(K + (long long)(j0 + r) * d + l0 + c);
      }
      ATTNIO_SYNC();
      for (int e = tid; e < bi * bj; e += nt) {
        const int r = e / bj, c = e - r * bj;
        const float* q = Qt + r * bl;
        const float* k = Kt + c * bl;
        float acc = At[e];
        for (int t = 0; t < bl; ++t) acc += q[t] * k[t];
        At[e] = acc;
      }
      ATTNIO_SYNC();
    }
    for (int e = tid; e < bi * bj; e += nt) {  // A_ij = exp(scale·A_ij): b_i·b_j writes
      const int r = e / bj, c = e - r * bj;
      const float a = expf(scale * At[e]);
      At[e] = a;
      ATTNIO_STORE(A + (long long)(i0 + r) * N + j0 + c, a);
    }
    ATTNIO_SYNC();
    for (int r = tid; r < bi; r += nt) {  // D_i += rowsum A_ij
      float s = 0.f;
      for (int c = 0; c < bj; ++c) s += At[r * bj + c];
      Di[r] += s;
    }
    ATTNIO_SYNC();
  }
  for (int r = tid; r < bi; r += nt) ATTNIO_STORE(D + i0 + r, Di[r]);  // D_i: b_i writes
  ATTNIO_IO_FLUSH(io_counter);
}

template <class T>
ATTNIO_GLOBAL void square_tiling_phase2(const float* __restrict__ A, const float* __restrict__ D,
                                        const T* __restrict__ V, T* __restrict__ O, int N, int dv, int B,
                                        unsigned long long* io_counter) {
  ATTNIO_SHARED(smem);
  ATTNIO_IO_COUNTERS;
  const int tid = ATTNIO_TID, nt = ATTNIO_NTHREADS;
  const int i0 = ATTNIO_BLOCK * B;
  const int bi = attnio_min(B, N - i0);
  float* At = smem;        // B·B: A[i,k]
  float* Vt = At + B * B;  // B·B: V[k,j]
  float* Ot = Vt + B * B;  // B·B: O_ij
  float* Di = Ot + B * B;  // B: D_i

  for (int r = tid; r < bi; r += nt) Di[r] = ATTNIO_LOAD(D + i0 + r);  // D_i: b_i reads
  ATTNIO_SYNC();
  for (int j0 = 0; j0 < dv; j0 += B) {
    const int bj = attnio_min(B, dv - j0);
    for (int e = tid; e < bi * bj; e += nt) Ot[e] = 0.f;
    for (int k0 = 0; k0 < N; k0 += B) {
      const int bk = attnio_min(B, N - k0);
      for (int e = tid; e < bi * bk; e += nt) {  // A[i,k]: b_i·b_k reads
        const int r = e / bk, c = e - r * bk;
        At[e] = ATTNIO_LOAD(A + (long long)(i0 + r) * N + k0 + c);
      }
      for (int e = tid; e < bk * bj; e += nt) {  // V[k,j]: b_k·b_j reads
        const int r = e / bj, c = e - r * bj;
        Vt[e] = ATTNIO_LOAD(V + (long long)(k0 + r) * dv + j0 + c);
      }
      ATTNIO_SYNC();
      for (int e = tid; e < bi * bj; e += nt) {  // O_ij += diag(D_i)⁻¹ A[i,k] V[k,j]
        const int r = e / bj, c = e - r * bj;
        const float* a = At + r * bk;
        float acc = 0.f;
        for (int t = 0; t < bk; ++t) acc += a[t] * Vt[t * bj + c];
        Ot[e] += acc / Di[r];
      }
      ATTNIO_SYNC();
    }
    for (int e = tid; e < bi * bj; e += nt) {  // O_ij: b_i·b_j writes (same thread that zeroes Ot[e] next)
      const int r = e / bj, c = e - r * bj;
      ATTNIO_STORE(O + (long long)(i0 + r) * dv + j0 + c, Ot[e]);
    }
  }
  ATTNIO_IO_FLUSH(io_counter);
}

#define ATTNIO_INSTANTIATE_SQUARE(T)                                                                \
  template ATTNIO_GLOBAL void square_tiling_phase1<T>(const T* __restrict__, const T* __restrict__, \
                                                      float* __restrict__, float* __restrict__, int, \
                                                      int, int, float, unsigned long long*);         \
  template ATTNIO_GLOBAL void square_tiling_phase2<T>(const float* __restrict__,                    \
                                                      const float* __restrict__,                    \
                                                      const T* __restrict__, T* __restrict__, int,  \
                                                      int, int, unsigned long long*);
ATTNIO_INSTANTIATE_SQUARE(float)
ATTNIO_INSTANTIATE_SQUARE(attnio_half)
ATTNIO_INSTANTIATE_SQUARE(attnio_bfloat16)
