/* WaldBoost over multi-block LBP (gst/detect/families/waldboost/model.h) on
 * the integral pyramid (pyramid.cl): after each stage's response is added to
 * a window's running sum, the window is rejected when the sum is below the
 * stage's neg, accepted when above its pos; a window that runs through every
 * stage is a hit when its sum reaches gamma.  Sums are 64-bit fixed point
 * (units of 2^-32), as in the reference evaluation, so any order of adding
 * gives the same sum.
 *
 * GPU schedule, a staged reduction of candidate windows:
 *   wb_first  one work-group per 256 windows of a level: every lane runs its
 *             window through the first WB_SYNC_FIRST stages without
 *             synchronising, then WB_SYNC_STEP stages at a time until at most
 *             1 / divisor of the work-group's windows are still undecided;
 *             those go to the next list, compacted (window, origin, next
 *             stage, sum);
 *   wb_more   the same over a list, taken 256 items at a time by persistent
 *             work-groups (one launch per further divisor);
 *   wb_tail   one work-group per remaining candidate, a lane per stage: the
 *             responses of the stages left are summed by a parallel prefix
 *             scan, which finds the first stage that rejects or accepts.
 *   A window that reaches the tail (the stages that decide nothing) goes
 *   straight to wb_tail's list.  A list that is full drops what does not fit
 *   and counts it in the candidates' lost counter (candidates.cl).
 * CPU schedule: wb_rows, a work-item per row of windows, each window through
 *   its stages in order.
 *
 * Build options: -D WB_WIN_W, -D WB_WIN_H, -D WB_SYNC_FIRST, -D WB_SYNC_STEP,
 * [-D WB_FLAT: windows flatter than the model's minStdDev are rejected], and
 * pyramid.cl's.
 */

/* WB_FLOAT_SUMS: sums in single precision, added in stage order, and float
 * thresholds (OpenCV xobjdetect's arithmetic); no schedule sums in another
 * order then (wb_tail runs each candidate's stages in order). */
#ifdef WB_FLOAT_SUMS
typedef float wb_acc_t;
typedef struct {
  int4 f;
  float neg, pos; /* -INFINITY, INFINITY: never */
  int pad0, pad1;
} wb_stage_t;
#else
typedef long wb_acc_t;
typedef struct {
  int4 f;   /* the LBP grid: x, y (window pixels), block width, block height */
  long neg; /* rejected when the sum is below this (LONG_MIN: never) */
  long pos; /* accepted when the sum is above this (LONG_MAX: never) */
} wb_stage_t;
#endif

typedef struct {
  uint win;      /* window index (candidates.cl) */
  uint ofs;      /* the window's origin in the integral planes */
  int next;      /* the first stage not evaluated yet */
  int pad;
  wb_acc_t sum;  /* the running sum after stages [0, next) */
} wb_item_t;

WORKLIST_LOAD (wb_item_load, wb_item_t)
WG_INCLUSIVE_SUM (wg_inclusive_sum_long, long)

#define WB_MODEL __global const wb_stage_t *stages, __global const wb_acc_t *resp, int nstages, int tail, wb_acc_t gamma
#define WB_MODEL_PASS stages, resp, nstages, tail, gamma

/* The LBP code of the grid f of the window at p: bit 7 to bit 0 the
 * top-left, top, top-right, right, bottom-right, bottom, bottom-left and left
 * blocks, each set when its sum is >= the centre block's. */
inline int wb_code (__global const sum_t *p, int s, int4 f)
{
  const int x0 = f.x, x1 = x0 + f.z, x2 = x1 + f.z, x3 = x2 + f.z;
  const int y0 = f.y * s, y1 = y0 + f.w * s, y2 = y1 + f.w * s, y3 = y2 + f.w * s;
  const uint a0 = p[y0 + x0], a1 = p[y0 + x1], a2 = p[y0 + x2], a3 = p[y0 + x3];
  const uint b0 = p[y1 + x0], b1 = p[y1 + x1], b2 = p[y1 + x2], b3 = p[y1 + x3];
  const uint c0 = p[y2 + x0], c1 = p[y2 + x1], c2 = p[y2 + x2], c3 = p[y2 + x3];
  const uint d0 = p[y3 + x0], d1 = p[y3 + x1], d2 = p[y3 + x2], d3 = p[y3 + x3];
#define WB_BLOCK(u0, u1, v0, v1) SUM_WRAP ((u0) - (u1) - (v0) + (v1))
  const int c = WB_BLOCK (b1, b2, c1, c2);
  return (WB_BLOCK (a0, a1, b0, b1) >= c) << 7 | (WB_BLOCK (a1, a2, b1, b2) >= c) << 6 |
         (WB_BLOCK (a2, a3, b2, b3) >= c) << 5 | (WB_BLOCK (b2, b3, c2, c3) >= c) << 4 |
         (WB_BLOCK (c2, c3, d2, d3) >= c) << 3 | (WB_BLOCK (c1, c2, d1, d2) >= c) << 2 |
         (WB_BLOCK (c0, c1, d0, d1) >= c) << 1 | (WB_BLOCK (b0, b1, c0, c1) >= c);
#undef WB_BLOCK
}

/* Runs stages [*next, upto) of the window at p: -1 rejected, 1 accepted, 0
 * undecided at upto.  *next follows the stages evaluated. */
inline int wb_run (__global const sum_t *p, int s, __global const wb_stage_t *stages, __global const wb_acc_t *resp,
                   int *next, int upto, wb_acc_t *acc)
{
  while (*next < upto) {
    const wb_stage_t st = stages[*next];
    *acc += resp[(*next << 8) | wb_code (p, s, st.f)];
    (*next)++;
    if (*acc < st.neg)
      return -1;
    if (*acc > st.pos)
      return 1;
  }
  return 0;
}

#ifdef WB_FLAT
/* Whether the window is flatter than the model's minStdDev: n * sum(p^2) -
 * sum(p)^2 below the host's limit (the sum plane is 32-bit then). */
inline int wb_flat (__global const sum_t *p, __global const uint *q, int s, long limit)
{
  const int W = WB_WIN_W, H = WB_WIN_H;
  const long sum = (long) (uint) (p[0] - p[W] - p[s * H] + p[W + s * H]);
  const long sq = (long) (uint) (q[0] - q[W] - q[s * H] + q[W + s * H]);
  return (long) (W * H) * sq - sum * sum < limit;
}
#endif

/* The score of a sum, for the candidates (a float in sum units). */
#ifdef WB_FLOAT_SUMS
inline float wb_score (float acc) { return acc; }
#else
inline float wb_score (long acc) { return convert_float (acc) * 0x1p-32f; }
#endif

/* A lane's window after a run that ended undecided at `next`: still in the
 * reduction (returns 1), or at the tail: decided now when there is no tail,
 * else appended to the tail list. */
inline int wb_settle (int r, int next, int tail, int nstages, wb_acc_t gamma, uint win, uint ofs, wb_acc_t acc,
                      __global wb_item_t *tl, __global uint *counters, int tl_at, uint tl_cap, __global uint *cand,
                      uint cand_cap)
{
  if (r > 0)
    candidate_emit (cand, cand_cap, win, wb_score (acc));
  if (r != 0)
    return 0;
  if (next < tail)
    return 1;
  if (tail == nstages) {
    if (acc >= gamma)
      candidate_emit (cand, cand_cap, win, wb_score (acc));
    return 0;
  }
  const uint i = atomic_inc (&counters[tl_at]);
  if (i < tl_cap) {
    wb_item_t it = {win, ofs, next, 0, acc};
    tl[i] = it;
  } else {
    atomic_inc (&cand[1]);
  }
  return 0;
}

/* The reduction shared by wb_first and wb_more: each lane's window (alive:
 * undecided, before the tail) through WB_SYNC_STEP stages at a time until at
 * most 1 / divisor of the work-group's lanes are alive, then the alive ones
 * appended to `out` in lane order.  Called by the whole work-group. */
inline void wb_reduce (int alive, uint win, uint ofs, int next, wb_acc_t acc, int divisor, __global const sum_t *sum,
                       int stride, WB_MODEL, __global wb_item_t *out, int out_at, uint out_cap,
                       __global wb_item_t *tl, int tl_at, uint tl_cap, __global uint *counters,
                       __global uint *cand, uint cand_cap, __local int *scratch, __local uint *sbase, int lid)
{
  int total;
  int rank = wg_rank (alive, lid, scratch, &total);
  while (total * divisor > WGF) {
    if (alive) {
      const int r = wb_run (sum + ofs, stride, stages, resp, &next, min (next + WB_SYNC_STEP, tail), &acc);
      alive = wb_settle (r, next, tail, nstages, gamma, win, ofs, acc, tl, counters, tl_at, tl_cap, cand, cand_cap);
    }
    barrier (CLK_LOCAL_MEM_FENCE); /* scratch is read by every lane above */
    rank = wg_rank (alive, lid, scratch, &total);
  }
  const uint at = worklist_reserve (total, &counters[out_at], out_cap, cand, sbase, lid) + (uint) rank;
  if (alive && at < out_cap) {
    wb_item_t it = {win, ofs, next, 0, acc};
    out[at] = it;
  }
  barrier (CLK_LOCAL_MEM_FENCE);
}

/* segs: one int2 per work-group: (level, first window of the level). */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
wb_first (__global const int8 *levels, __global const int2 *segs, __global const sum_t *sum,
          __global const uint *sqsum, int stride, WB_MODEL, long flat, int divisor, __global wb_item_t *out,
          int out_at, uint out_cap, __global wb_item_t *tl, int tl_at, uint tl_cap, __global uint *counters,
          __global uint *cand, uint cand_cap)
{
  __local int scratch[WGF];
  __local uint sbase;
  const int lid = get_local_id (0);
  int8 L;
  int alive, ix, iy;
  const int i = segment_window (levels, segs, lid, &L, &alive, &ix, &iy);
  const uint ofs = (uint) ((L.s1 + iy * L.s6) * stride + L.s0 + ix * L.s6);
  const uint win = (uint) (L.s7 + i);
  int next = 0;
  wb_acc_t acc = 0;
#ifdef WB_FLAT
  if (alive && wb_flat (sum + ofs, sqsum + ofs, stride, flat))
    alive = 0;
#endif
  if (alive) {
    const int r = wb_run (sum + ofs, stride, stages, resp, &next, min (WB_SYNC_FIRST, tail), &acc);
    alive = wb_settle (r, next, tail, nstages, gamma, win, ofs, acc, tl, counters, tl_at, tl_cap, cand, cand_cap);
  }
  wb_reduce (alive, win, ofs, next, acc, divisor, sum, stride, WB_MODEL_PASS, out, out_at, out_cap, tl, tl_at, tl_cap,
             counters, cand, cand_cap, scratch, &sbase, lid);
}

/* One further step of the reduction over the list `in` (its count at
 * counters[in_at], its chunks handed out through counters[in_at + 1], at
 * most in_cap stored). */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
wb_more (__global const sum_t *sum, int stride, WB_MODEL, int divisor, __global const wb_item_t *in, int in_at,
         uint in_cap, __global wb_item_t *out, int out_at, uint out_cap, __global wb_item_t *tl, int tl_at, uint tl_cap,
         __global uint *counters, __global uint *cand, uint cand_cap)
{
  __local int scratch[WGF];
  __local uint sbase, lbase;
  const int lid = get_local_id (0);
  const uint n = min (counters[in_at], in_cap); /* past the capacity nothing was stored */
  for (uint base; (base = worklist_take (&counters[in_at + 1], WGF, &lbase, lid)) < n;) {
    int alive;
    const wb_item_t it = wb_item_load (in, base, n, lid, &alive);
    wb_reduce (alive, it.win, it.ofs, it.next, it.sum, divisor, sum, stride, WB_MODEL_PASS, out, out_at, out_cap, tl,
               tl_at, tl_cap, counters, cand, cand_cap, scratch, &sbase, lid);
  }
}

#ifdef WB_FLOAT_SUMS
/* The stages left of each candidate in the list `in`, in order, a work-item
 * per candidate (sums in stage order, as the format defines them). */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
wb_tail (__global const sum_t *sum, int stride, WB_MODEL, __global const wb_item_t *in, int in_at, uint in_cap,
         __global uint *counters, __global uint *cand, uint cand_cap)
{
  const uint n = min (counters[in_at], in_cap);
  for (;;) {
    const uint idx = atomic_inc (&counters[in_at + 1]);
    if (idx >= n)
      break;
    const wb_item_t it = in[idx];
    int next = it.next;
    wb_acc_t acc = it.sum;
    const int r = wb_run (sum + it.ofs, stride, stages, resp, &next, nstages, &acc);
    if (r > 0 || (r == 0 && acc >= gamma))
      candidate_emit (cand, cand_cap, it.win, wb_score (acc));
  }
}
#else
/* The stages left of each candidate in the list `in`, a work-group per
 * candidate and a lane per stage: the inclusive prefix scan of the responses
 * gives the sum after every stage, the first stage whose sum leaves
 * [neg, pos] decides, else gamma does. */
__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
wb_tail (__global const sum_t *sum, int stride, WB_MODEL, __global const wb_item_t *in, int in_at, uint in_cap,
         __global uint *counters, __global uint *cand, uint cand_cap)
{
  __local long part[WGF];
  __local int scratch[WGF];
  __local uint lidx;
  const int lid = get_local_id (0);
  const uint n = min (counters[in_at], in_cap);
  for (uint idx; (idx = worklist_take (&counters[in_at + 1], 1u, &lidx, lid)) < n;) {
    const wb_item_t it = in[idx];
    __global const sum_t *p = sum + it.ofs;
    long acc = it.sum;
    int decided = 0;
    for (int c0 = it.next; c0 < nstages && !decided; c0 += WGF) {
      const int i = c0 + lid;
      long r = 0, neg = LONG_MIN, pos = LONG_MAX;
      if (i < nstages) {
        const wb_stage_t st = stages[i];
        r = resp[(i << 8) | wb_code (p, stride, st.f)];
        neg = st.neg;
        pos = st.pos;
      }
      part[lid] = r;
      wg_inclusive_sum_long (part, lid);
      const long S = acc + part[lid];
      const int out = i < nstages && (S < neg || S > pos);
      int last; /* the largest of (WGF - 1 - lane) over the lanes whose stage decides */
      wg_max_before (out ? WGF - 1 - lid : -1, lid, scratch, &last);
      if (last >= 0) {
        decided = 1;
        if (lid == WGF - 1 - last && S > pos)
          candidate_emit (cand, cand_cap, it.win, wb_score (S));
      }
      acc += part[WGF - 1];
      barrier (CLK_LOCAL_MEM_FENCE);
    }
    if (!decided && lid == 0 && acc >= gamma)
      candidate_emit (cand, cand_cap, it.win, wb_score (acc));
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

#endif

/* CPU schedule: the windows of one row of a level in order, each through its
 * stages (wrow_map: level | iy << 10). */
__kernel void
wb_rows (__global const int8 *levels, __global const int *wrow_map, int nrows, __global const sum_t *sum,
         __global const uint *sqsum, int stride, WB_MODEL, long flat, __global uint *cand, uint cand_cap)
{
  LEVEL_ENTRY (wrow_map, nrows, L, iy);
  const int s = L.s6;
  const int row = (L.s1 + iy * s) * stride + L.s0;
  for (int ix = 0; ix < L.s4; ix++) {
    const int ofs = row + ix * s;
#ifdef WB_FLAT
    if (wb_flat (sum + ofs, sqsum + ofs, stride, flat))
      continue;
#endif
    int next = 0;
    wb_acc_t acc = 0;
    const int r = wb_run (sum + ofs, stride, stages, resp, &next, nstages, &acc);
    if (r > 0 || (r == 0 && acc >= gamma))
      candidate_emit (cand, cand_cap, L.s7 + iy * L.s4 + ix, wb_score (acc));
  }
}
