// comm_bytes: the bytes each hand-written algorithm sends from each rank,
// derived from the algorithm's definition (the lecture's, not the code's), so
// that the tests can hold the counted bytes to it exactly, rank by rank.
// Sizes are in elements; multiply by the element size.
#ifndef COMM_BYTES_H
#define COMM_BYTES_H

#include <stdint.h>
#include <string.h>

// Chunk k of n elements cut among N like the ring's chunks.
static inline uint64_t cb_chunk(uint64_t n, int N, int k) {
    return n * (uint64_t)(k + 1) / (uint64_t)N - n * (uint64_t)k / (uint64_t)N;
}

// A ring's reduce-scatter phase sends every chunk but member r's own; its
// all-gather phase every chunk but r+1's.
static inline uint64_t cb_ring_rs(uint64_t n, int N, int r) { return N > 1 ? n - cb_chunk(n, N, r) : 0; }
static inline uint64_t cb_ring_ag(uint64_t n, int N, int r) { return N > 1 ? n - cb_chunk(n, N, (r + 1) % N) : 0; }

// r's lowest set bit (r's parent in a binomial tree is r minus it); for the
// root, the first power of two not below N.
static inline int cb_lowbit(int r, int N) {
    int m = 1;
    while (m < N && !(r & m)) m <<= 1;
    return m;
}

// ----------------------------------------------------------------------------
// recursive halving and doubling, over p virtual ranks

typedef struct { int p, rem; } CbFold;

static inline CbFold cb_fold(int N) {
    int p = 1;
    while (2 * p <= N) p *= 2;
    return (CbFold){ p, N - p };
}

static inline int cb_virtual(CbFold f, int r) { return r < 2 * f.rem ? (r % 2 ? r / 2 : -1) : r - f.rem; }
static inline int cb_first_real(CbFold f, int v) { return v < f.rem ? 2 * v : v + f.rem; }

// Element where real rank k's block starts: blocks of count, or n cut in chunks (count 0).
static inline uint64_t cb_off(uint64_t n, uint64_t count, int N, int k) {
    return count ? (uint64_t)k * count : n * (uint64_t)k / (uint64_t)N;
}

// The elements virtual rank v sends in recursive halving (the half it gives
// away at each step) and in recursive doubling (all it holds, at each step).
static inline uint64_t cb_halving(CbFold f, int v, uint64_t n, uint64_t count, int N) {
    uint64_t sent = 0;
    int lo = 0, hi = f.p;
    for (int mask = f.p / 2; mask > 0; mask >>= 1) {
        int mid = lo + mask, glo = v < mid ? mid : lo, ghi = v < mid ? hi : mid;
        sent += cb_off(n, count, N, cb_first_real(f, ghi)) - cb_off(n, count, N, cb_first_real(f, glo));
        if (v < mid) hi = mid;
        else lo = mid;
    }
    return sent;
}

static inline uint64_t cb_doubling(CbFold f, int v, uint64_t n, uint64_t count, int N) {
    uint64_t sent = 0;
    for (int mask = 1; mask < f.p; mask <<= 1) {
        int lo = v & ~(mask - 1), hi = lo + mask;
        sent += cb_off(n, count, N, cb_first_real(f, hi)) - cb_off(n, count, N, cb_first_real(f, lo));
    }
    return sent;
}

static inline int cb_lg(int p) {
    int k = 0;
    while ((1 << k) < p) k++;
    return k;
}

// ----------------------------------------------------------------------------
// per algorithm

// What rank r of N sends for one collective: n is the all-reduce's vector or
// the per-rank count of a reduce-scatter or all-gather (elements). K: ranks
// per node for hier (N % K == 0). kind: 0 all-reduce, 1 reduce-scatter, 2 all-gather.
static inline uint64_t cb_sent(const char *algo, int kind, uint64_t n, int N, int r, int K) {
    uint64_t all = kind ? n * (uint64_t)N : n;  // the payload, in elements
    if (N == 1) return 0;
    if (strcmp(algo, "ring") == 0)
        return kind == 0 ? cb_ring_rs(n, N, r) + cb_ring_ag(n, N, r) : (uint64_t)(N - 1) * n;
    if (strcmp(algo, "naive") == 0) {  // rank 0 receives, reduces and sends back to each
        if (kind == 0) return r == 0 ? (uint64_t)(N - 1) * n : n;
        if (kind == 1) return r == 0 ? (uint64_t)(N - 1) * n : all;
        return r == 0 ? (uint64_t)(N - 1) * all : n;
    }
    if (strcmp(algo, "tree") == 0) {
        int low = cb_lowbit(r, N);
        uint64_t up = 0, down = 0;
        if (r) up = kind == 2 ? (uint64_t)(low < N - r ? low : N - r) * n : all;
        for (int m = low / 2; m > 0; m /= 2)
            if (r + m < N) down += kind == 1 ? (uint64_t)(m < N - r - m ? m : N - r - m) * n : all;
        return up + down;
    }
    if (strcmp(algo, "rd") == 0 || strcmp(algo, "rabenseifner") == 0) {
        CbFold f = cb_fold(N);
        int v = cb_virtual(f, r), even = r < 2 * f.rem && r % 2 == 0, odd = r < 2 * f.rem && r % 2;
        uint64_t count = kind ? n : 0, sent = 0;
        if (even) sent += kind == 2 ? n : all;             // the fold
        if (odd) sent += kind == 1 ? n : all;              // handing the result back
        if (v < 0) return sent;
        if (kind == 0 && strcmp(algo, "rd") == 0) return sent + (uint64_t)cb_lg(f.p) * n;
        if (kind != 2) sent += cb_halving(f, v, all, count, N);
        if (kind != 1) sent += cb_doubling(f, v, all, count, N);
        return sent;
    }
    if (strcmp(algo, "hier") == 0) {
        int M = N / K, l = r % K, j = r / K;
        if (kind == 0) {
            uint64_t len = cb_chunk(n, K, l);
            return cb_ring_rs(n, K, l) + cb_ring_rs(len, M, j) + cb_ring_ag(len, M, j) + cb_ring_ag(n, K, l);
        }
        return (uint64_t)(K - 1) * (uint64_t)M * n + (uint64_t)(M - 1) * n;
    }
    return 0;
}

// The part of it sent to other nodes, for the ring and hier (nodes of K
// consecutive ranks): a ring sends to r+1 only; hier crosses in its middle step.
static inline uint64_t cb_inter(const char *algo, int kind, uint64_t n, int N, int r, int K) {
    if (N == 1) return 0;
    if (strcmp(algo, "ring") == 0) return r / K != ((r + 1) % N) / K ? cb_sent(algo, kind, n, N, r, K) : 0;
    if (strcmp(algo, "hier") == 0) {
        int M = N / K, l = r % K, j = r / K;
        if (kind == 0) {
            uint64_t len = cb_chunk(n, K, l);
            return cb_ring_rs(len, M, j) + cb_ring_ag(len, M, j);
        }
        return (uint64_t)(M - 1) * n;
    }
    return 0;
}

#endif
