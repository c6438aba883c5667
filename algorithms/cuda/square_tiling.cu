// Saha–Ye SquareTilingAttention (arXiv 2402.07443, Algorithm 1), forward, in the numerically stable form of
// algorithms/square_tiling.py, as two kernels (the phases): Phase 2 reads the logits S and the row
// logsumexps L that Phase 1 wrote to global memory, so a grid-wide barrier (the launch boundary) separates
// them, as slow memory separates them in the model.
//
// One tile side B = ⌊√(M/4)⌋ (SquareTiling.default); T = ⌈N/B⌉ thread blocks per phase; block i owns rows
// [i·B, i·B + b_i) (b = B except the last tile of a dimension).
//
// Phase 1 (square_tiling_phase1), block i:
//   L_i ← −∞ (b_i words, shared)                      # the paper's row sums d^(B)[i] ← 0
//   for j in 1..⌈N/B⌉:  A_ij ← 0 (b_i×b_j, shared)
//     for ℓ in 1..⌈d/B⌉:  load Q[i,ℓ] (b_i×b_ℓ) and K[j,ℓ] (b_j×b_ℓ); A_ij += Q[i,ℓ]·K[j,ℓ]ᵀ
//     A_ij ← scale·A_ij; write A_ij to S (b_i·b_j words)     # the paper writes exp(A_ij): same words
//     L_i ← logaddexp(L_i, row logsumexp A_ij)               # the paper: d[i] += A_ij·1
//   write L_i (b_i words)
// Phase 2 (square_tiling_phase2), block i:
//   load L_i (b_i words)
//   for j in 1..⌈dv/B⌉:  O_ij ← 0 (b_i×b_j, shared)
//     for k in 1..⌈N/B⌉:  load S[i,k] (b_i×b_k) as P = exp(S[i,k] − L_i) (= diag(d)⁻¹A, in place) and
//                         V[k,j] (b_k×b_j); O_ij += P·V[k,j]
//     write O_ij (b_i·b_j words)
//
// Shared memory (float32 words) in each phase: three B×B tiles and one B-vector, 3B² + B ≤ 4B² ≤ M.
// K[j,ℓ] is kept transposed in shared memory so that consecutive threads (consecutive columns of A_ij) read
// consecutive banks; the layout changes no word count.
// Global words (T = ⌈N/B⌉, T_v = ⌈dv/B⌉): reads T·N·d (Q) + T·N·d (K) + N (L) + T_v·N² (S) + T·N·dv (V);
// writes N² (S) + N (L) + N·dv (O) — bounds.costs' square_tiling formula. S and L are float32 scratch.

// C (rows×cols) += A (rows×inner) · B (inner×cols), all row-major tiles in shared memory, the elements of C
// shared out over the threads: the tile product of both phases (no global word moves).
ATTNIO_DEVICE void attnio_tile_mma(float* C, const float* A, const float* B, int rows, int cols, int inner,
                                   int tid, int nt) {
  for (int e = tid; e < rows * cols; e += nt) {
    const int r = e / cols, c = e - r * cols;
    const float* a = A + r * inner;
    float acc = C[e];
    for (int t = 0; t < inner; ++t) acc += a[t] * B[t * cols + c];
    C[e] = acc;
  }
}

ATTNIO_DEVICE float attnio_logaddexp(float a, float b) {
  const float hi = a > b ? a : b, lo = a > b ? b : a;
  return hi + log1pf(expf(lo - hi));  // a = −∞: exp(−∞) = 0, gives b
}

template <class T>
ATTNIO_GLOBAL void square_tiling_phase1(const T* __restrict__ Q, const T* __restrict__ K,
                                        float* __restrict__ S, float* __restrict__ L, int N, int d, int B,
                                        float scale, unsigned long long* io_counter) {
  ATTNIO_SHARED(smem);
  ATTNIO_IO_COUNTERS;
  const int tid = ATTNIO_TID, nt = ATTNIO_NTHREADS;
  const int i0 = ATTNIO_BLOCK * B;
  const int bi = attnio_min(B, N - i0);
  float* Qt = smem;        // B·B: Q[i,ℓ]
  float* Kt = Qt + B * B;  // B·B: K[j,ℓ] transposed: K[j0 + c][l0 + t] at Kt[t·b_j + c]
  float* At = Kt + B * B;  // B·B: A_ij
  float* Li = At + B * B;  // B: running row logsumexp L_i

  for (int r = tid; r < bi; r += nt) Li[r] = ATTNIO_NEG_INF;
  for (int j0 = 0; j0 < N; j0 += B) {
    const int bj = attnio_min(B, N - j0);
    for (int e = tid; e < bi * bj; e += nt) At[e] = 0.f;
    for (int l0 = 0; l0 < d; l0 += B) {
      const int bl = attnio_min(B, d - l0);
      for (int e = tid; e < bi * bl; e += nt) {  // Q[i,ℓ]: b_i·b_ℓ reads
        const int r = e / bl, c = e - r * bl;
        Qt[e] = ATTNIO_LOAD(Q + (long long)(i0 + r) * d + l0 + c);
      }
      for (int e = tid; e < bj * bl; e += nt) {  // K[j,ℓ]: b_j·b_ℓ reads, stored transposed
        const int r = e / bl, c = e - r * bl;
        Kt[c * bj + r] = ATTNIO_LOAD(K + (long long)(j0 + r) * d + l0 + c);
      }
      ATTNIO_SYNC();
      attnio_tile_mma(At, Qt, Kt, bi, bj, bl, tid, nt);  // A_ij += Q[i,ℓ]·K[j,ℓ]ᵀ
      ATTNIO_SYNC();
    }
    for (int e = tid; e < bi * bj; e += nt) {  // logits scale·A_ij to S: b_i·b_j writes
      const int r = e / bj, c = e - r * bj;
      const float a = scale * At[e];
      At[e] = a;
      ATTNIO_STORE(S + (long long)(i0 + r) * N + j0 + c, a);
    }
    ATTNIO_SYNC();
    for (int r = tid; r < bi; r += nt) {  // L_i ← logaddexp(L_i, row logsumexp of the tile)
      const float* a = At + r * bj;
      float mx = a[0];
      for (int c = 1; c < bj; ++c) mx = fmaxf(mx, a[c]);
      float s = 0.f;
      for (int c = 0; c < bj; ++c) s += expf(a[c] - mx);
      Li[r] = attnio_logaddexp(Li[r], mx + logf(s));
    }
    ATTNIO_SYNC();
  }
  for (int r = tid; r < bi; r += nt) ATTNIO_STORE(L + i0 + r, Li[r]);  // L_i: b_i writes
  ATTNIO_IO_FLUSH(io_counter);
}

template <class T>
ATTNIO_GLOBAL void square_tiling_phase2(const float* __restrict__ S, const float* __restrict__ L,
                                        const T* __restrict__ V, T* __restrict__ O, int N, int dv, int B,
                                        unsigned long long* io_counter) {
  ATTNIO_SHARED(smem);
  ATTNIO_IO_COUNTERS;
  const int tid = ATTNIO_TID, nt = ATTNIO_NTHREADS;
  const int i0 = ATTNIO_BLOCK * B;
  const int bi = attnio_min(B, N - i0);
  float* Pt = smem;        // B·B: S[i,k], then P = exp(S[i,k] − L_i)
  float* Vt = Pt + B * B;  // B·B: V[k,j]
  float* Ot = Vt + B * B;  // B·B: O_ij
  float* Li = Ot + B * B;  // B: L_i

  for (int r = tid; r < bi; r += nt) Li[r] = ATTNIO_LOAD(L + i0 + r);  // L_i: b_i reads
  ATTNIO_SYNC();
  for (int j0 = 0; j0 < dv; j0 += B) {
    const int bj = attnio_min(B, dv - j0);
    for (int e = tid; e < bi * bj; e += nt) Ot[e] = 0.f;
    for (int k0 = 0; k0 < N; k0 += B) {
      const int bk = attnio_min(B, N - k0);
      for (int e = tid; e < bi * bk; e += nt) {  // S[i,k]: b_i·b_k reads, exponentiated on arrival
        const int r = e / bk, c = e - r * bk;
        Pt[e] = expf(ATTNIO_LOAD(S + (long long)(i0 + r) * N + k0 + c) - Li[r]);
      }
      for (int e = tid; e < bk * bj; e += nt) {  // V[k,j]: b_k·b_j reads
        const int r = e / bj, c = e - r * bj;
        Vt[e] = ATTNIO_LOAD(V + (long long)(k0 + r) * dv + j0 + c);
      }
      ATTNIO_SYNC();
      attnio_tile_mma(Ot, Pt, Vt, bi, bj, bk, tid, nt);  // O_ij += P·V[k,j]
      ATTNIO_SYNC();
    }
    for (int e = tid; e < bi * bj; e += nt) {  // O_ij: b_i·b_j writes (Ot[e] is next zeroed by this thread)
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
