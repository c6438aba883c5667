// FlashAttention-2 forward, fused: the schedule of algorithms/flash2.py, word for word.
//
// Grid: T_r = ⌈N/B_r⌉ thread blocks; block i owns Q rows [i·B_r, i·B_r + b_r) (b_r = B_r except the last).
//
//   load Q_i (b_r×d) into shared memory; O_i ← 0, ℓ_i ← 0, m_i ← −∞ in shared memory
//   for j in 1..T_c:                          # T_c = ⌈N/B_c⌉, b_c = B_c except the last
//     load K_j (b_c×d) into the K/V buffer; S_ij = scale·Q_i K_jᵀ (b_r×b_c)
//     m_new = max(m_i, rowmax S_ij); P̃_ij = exp(S_ij − m_new) in place; α = exp(m_i − m_new) (in m_i's
//       buffer); ℓ_i = α·ℓ_i + rowsum P̃_ij; load V_j (b_c×dv) into the K/V buffer (K_j is dead)
//     O_i = α·O_i + P̃_ij V_j; m_i ← m_new (the two m buffers swap roles)
//   write O_i = O_i/ℓ_i (b_r×dv words) and L_i = m_i + log ℓ_i (b_r words)
//
// Shared memory (float32 words), exactly Flash2Tiling.fast_words(B_r, B_c, d, dv) ≤ M:
//   Q_i B_r·d | O_i B_r·dv | S_ij B_r·B_c | m_i B_r | ℓ_i B_r | m_new B_r | K_j/V_j B_c·max(d, dv)
// Q_i and K_j are kept transposed (column t of the tile contiguous) so that the threads of a warp, which take
// consecutive rows r of S_ij, read consecutive shared-memory banks (row-major tiles of width d = 32·k would
// put a whole warp on one bank). V_j stays row-major: in O_i += P̃V_j consecutive threads take consecutive
// columns. The layout changes no word count.
//
// Global words: reads N·d (Q) + T_r·N·(d + dv) (K and V once per Q block); writes N·dv (O) + N (L).

template <class T>
ATTNIO_GLOBAL void flash2_fwd(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                              T* __restrict__ O, float* __restrict__ L, int N, int d, int dv, int B_r,
                              int B_c, float scale, unsigned long long* io_counter) {
  ATTNIO_SHARED(smem);
  ATTNIO_IO_COUNTERS;
  const int tid = ATTNIO_TID, nt = ATTNIO_NTHREADS;
  const int r0 = ATTNIO_BLOCK * B_r;
  const int br = attnio_min(B_r, N - r0);
  const int w = attnio_max(d, dv);
  float* Qi = smem;              // B_r·d, transposed: Q_i[r][t] at Qi[t·b_r + r]
  float* Oi = Qi + B_r * d;      // B_r·dv
  float* S = Oi + B_r * dv;      // B_r·B_c (row stride b_c)
  float* m_cur = S + B_r * B_c;  // B_r: m_i, then α
  float* l_i = m_cur + B_r;      // B_r
  float* m_nxt = l_i + B_r;      // B_r: m_new
  float* KV = m_nxt + B_r;       // B_c·max(d, dv): K_j transposed (K_j[c][t] at KV[t·b_c + c]), then V_j
  (void)w;

  const T* Qrow = Q + (long long)r0 * d;
  for (int e = tid; e < br * d; e += nt) {  // Q_i: b_r·d reads (coalesced), stored transposed
    const int r = e / d, t = e - r * d;
    Qi[t * br + r] = ATTNIO_LOAD(Qrow + e);
  }
  for (int e = tid; e < br * dv; e += nt) Oi[e] = 0.f;
  for (int r = tid; r < br; r += nt) {
    m_cur[r] = ATTNIO_NEG_INF;
    l_i[r] = 0.f;
  }
  ATTNIO_SYNC();

  for (int c0 = 0; c0 < N; c0 += B_c) {
    const int bc = attnio_min(B_c, N - c0);
    const T* Kj = K + (long long)c0 * d;
    for (int e = tid; e < bc * d; e += nt) {  // K_j: b_c·d reads (coalesced), stored transposed
      const int c = e / d, t = e - c * d;
      KV[t * bc + c] = ATTNIO_LOAD(Kj + e);
    }
    ATTNIO_SYNC();
    for (int e = tid; e < br * bc; e += nt) {  // S_ij = scale · Q_i K_jᵀ; consecutive threads, consecutive r
      const int c = e / br, r = e - c * br;
      float acc = 0.f;
      for (int t = 0; t < d; ++t) acc += Qi[t * br + r] * KV[t * bc + c];
      S[r * bc + c] = acc * scale;
    }
    ATTNIO_SYNC();
    for (int r = tid; r < br; r += nt) {  // online softmax statistics, one thread per row
      float* s = S + r * bc;
      float mx = m_cur[r];
      for (int c = 0; c < bc; ++c) mx = fmaxf(mx, s[c]);
      float sum = 0.f;
      for (int c = 0; c < bc; ++c) {
        const float p = expf(s[c] - mx);
        s[c] = p;
        sum += p;
      }
      const float alpha = expf(m_cur[r] - mx);
      l_i[r] = alpha * l_i[r] + sum;
      m_cur[r] = alpha;
      m_nxt[r] = mx;
    }
    const T* Vj = V + (long long)c0 * dv;
    for (int e = tid; e < bc * dv; e += nt) KV[e] = ATTNIO_LOAD(Vj + e);  // V_j: b_c·dv reads
    ATTNIO_SYNC();
    for (int e = tid; e < br * dv; e += nt) {  // O_i = α·O_i + P̃_ij V_j
      const int r = e / dv, k = e - r * dv;
      const float* p = S + r * bc;
      float acc = Oi[e] * m_cur[r];
      for (int c = 0; c < bc; ++c) acc += p[c] * KV[c * dv + k];
      Oi[e] = acc;
    }
    ATTNIO_SYNC();
    float* tmp = m_cur;  // m_i ← m_new: swap the buffers (no copy, no I/O)
    m_cur = m_nxt;
    m_nxt = tmp;
  }

  T* Orow = O + (long long)r0 * dv;
  for (int e = tid; e < br * dv; e += nt) {  // O_i: b_r·dv writes
    const int r = e / dv;
    ATTNIO_STORE(Orow + e, Oi[e] / l_i[r]);
  }
  for (int r = tid; r < br; r += nt) ATTNIO_STORE(L + r0 + r, m_cur[r] + logf(l_i[r]));  // L_i: b_r writes
  ATTNIO_IO_FLUSH(io_counter);
}

#define ATTNIO_INSTANTIATE_FLASH2(T)                                                              \
  template ATTNIO_GLOBAL void flash2_fwd<T>(const T* __restrict__, const T* __restrict__,         \
                                            const T* __restrict__, T* __restrict__,               \
                                            float* __restrict__, int, int, int, int, int, float,  \
                                            unsigned long long*);
ATTNIO_INSTANTIATE_FLASH2(float)
ATTNIO_INSTANTIATE_FLASH2(attnio_half)
ATTNIO_INSTANTIATE_FLASH2(attnio_bfloat16)
