/* Survivor compaction shared by the families' kernels: scans over a
 * work-group of WGF lanes, through warp votes and shuffles on NVIDIA GPUs
 * (WARP_PTX, kernels/warp.cl), else through local memory.  A family keeps a
 * lane's window where it survives and appends the kept ones to a list in lane
 * order: wg_rank gives each its place, one atomic per work-group reserves
 * them. */
#define WGF 256
/* Inclusive prefix sum of a[0..WGF) of T in place (the int one here, a family
 * makes others).  Called by the whole work-group. */
#define WG_INCLUSIVE_SUM(NAME, T)                                                                                \
  inline void NAME (__local T *a, int lid)                                                                     \
  {                                                                                                            \
    barrier (CLK_LOCAL_MEM_FENCE);                                                                             \
    for (int off = 1; off < WGF; off <<= 1) {                                                                  \
      const T v = lid >= off ? a[lid - off] : 0;                                                               \
      barrier (CLK_LOCAL_MEM_FENCE);                                                                           \
      a[lid] += v;                                                                                             \
      barrier (CLK_LOCAL_MEM_FENCE);                                                                           \
    }                                                                                                          \
  }
WG_INCLUSIVE_SUM (wg_inclusive_sum, int)

/* The largest v (>= -1) of the lanes before lid, -1 if none, and in *all the
 * largest of the work-group.  scratch: WGF ints of local memory; calls that
 * share it are separated by a barrier.  Called by the whole work-group. */
inline int wg_max_before (int v, int lid, __local int *scratch, int *all)
{
#ifdef WARP_PTX
  const int wl = lid & 31, wi = lid >> 5;
  int m = v;
  for (int d = 1; d < 32; d <<= 1) {
    const int u = (int) warp_up ((uint) m, d);
    if (wl >= d)
      m = max (m, u);
  }
  const int below = (int) warp_up ((uint) m, 1);
  if (wl == 31)
    scratch[wi] = m;
  barrier (CLK_LOCAL_MEM_FENCE);
  int before = wl > 0 ? below : -1, a = -1;
  for (int k = 0; k < WGF / 32; k++) {
    const int c = scratch[k];
    if (k < wi)
      before = max (before, c);
    a = max (a, c);
  }
  *all = a;
  return before;
#else
  scratch[lid] = v;
  barrier (CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < WGF; off <<= 1) {
    const int u = lid >= off ? scratch[lid - off] : -1;
    barrier (CLK_LOCAL_MEM_FENCE);
    scratch[lid] = max (scratch[lid], u);
    barrier (CLK_LOCAL_MEM_FENCE);
  }
  *all = scratch[WGF - 1];
  return lid > 0 ? scratch[lid - 1] : -1;
#endif
}

/* How many lanes before lid keep (their order in lane order), and in *total
 * how many of the work-group do.  scratch as for wg_max_before. */
inline int wg_rank (int keep, int lid, __local int *scratch, int *total)
{
#ifdef WARP_PTX
  const uint b = warp_ballot (keep);
  const int wi = lid >> 5;
  if ((lid & 31) == 0)
    scratch[wi] = (int) popcount (b);
  barrier (CLK_LOCAL_MEM_FENCE);
  int before = (int) popcount (b & warp_lanemask_lt ()), t = 0;
  for (int k = 0; k < WGF / 32; k++) {
    const int c = scratch[k];
    before += k < wi ? c : 0;
    t += c;
  }
  *total = t;
  return before;
#else
  scratch[lid] = keep;
  wg_inclusive_sum (scratch, lid);
  *total = scratch[WGF - 1];
  return scratch[lid] - keep;
#endif
}

/* The first of `total` places the work-group reserves in a list whose count
 * is *count, one atomic for them all (rank from wg_rank adds each lane's
 * place).  Called by the whole work-group. */
inline uint wg_reserve (int total, __global uint *count, __local uint *sbase, int lid)
{
  if (lid == 0)
    *sbase = total ? atomic_add (count, (uint) total) : 0u;
  barrier (CLK_LOCAL_MEM_FENCE);
  return *sbase;
}
