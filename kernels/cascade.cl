/* Boosted cascades (OpenCV Haar and LBP, stumps and trees) over every window
 * of every pyramid level, with two schedules that give the same answers:
 *
 * GPU schedule (many lanes):
 *   cascade_first  one work-group per segment of window rows of a level:
 *                  stage 0 over every window, then OpenCV's skip rule (the
 *                  window after a stage-0 rejection is not evaluated) by a
 *                  parallel max-scan; the windows OpenCV evaluates that
 *                  pass stage 0 go through the other generated stages
 *                  (SPEC_STAGES), a work-group's worth at a time, and the
 *                  survivors are appended to one list;
 *   cascade_list   persistent work-groups take chunks of that list and run
 *                  the later stages from the model in memory, compacting
 *                  the survivors in local memory after every stage; when few
 *                  windows remain, several lanes share each window's trees
 *                  (with fp64 only, where the sum is exact in any order).
 *                  Windows passing every stage are hits.
 * CPU schedule (few cores): cascade_rows, one work-item per row of windows,
 *   OpenCV's own loop (every stage, skip after a stage-0 rejection); for LBP
 *   stumps and Haar models without tilted features it reads the first
 *   stages' results from vector code over 16 windows at once.
 *
 * Level descriptors are int8: x0, y0, width, height, nx, ny, step, first_window.
 * The list holds (window index, integral offset) pairs.  Hits go to the
 * frame's candidates (kernels/candidates.cl); counters[0] counts the list,
 * counters[1] hands out its chunks.
 */

#define CODE_REJECT0 0 /* evaluated, rejected by stage 0: OpenCV skips the next window */
#define CODE_PASS0 1   /* passed stage 0 */
#define CODE_INVALID 2 /* refused before stage 0 (flat window, Haar) */

#define MODEL_ARGS                                                                                 \
  __global const stage_t *stages, int nstages, __global const tree_t *trees,                      \
      __global const node_t *nodes, __global const stump_t *stumps, __global const float *leaves,   \
      __global const feature_t *features, __global const int *fofs, __global const uint *subsets
/* fofs: feature offsets for the packed integrals' stride (global reads) */
#define MODEL_PASS stages, trees, nodes, stumps, leaves, features, fofs, subsets

/* Stage si of the window at sum/tilted: the generated code (GEN_STAGES,
 * spec_stage_passes: the model written in as constants) for the first
 * stages, the data-driven evaluation for the rest.  s: the planes' stride. */
#define STAGE_PASSES(si, sum, tilted, s, vnf)                                                              \
  ((si) < GEN_STAGES ? spec_stage_passes ((si), (sum), (tilted), (s), (vnf))                              \
                      : stage_passes ((sum), (tilted), (s), (vnf), (si), MODEL_PASS))

/* OpenCV HaarEvaluator::setWindow: variance over the window inset by one
 * pixel; flat windows (area / sqrt(nf) >= 0.1) are refused. */
inline int window_norm (__global const sum_t *p, __global const uint *q, int s, float *vnf)
{
#ifdef FEATURE_HAAR
  const int a = 1 + s, b = (WIN_W - 1) + s, c = 1 + s * (WIN_H - 1), d = (WIN_W - 1) + s * (WIN_H - 1);
#ifdef NARROW_SUM
  const int valsum = rect_sum_banded (p, s, 1, 1, WIN_W - 2, WIN_H - 2, 257 / (WIN_W - 2));
#else
  const int valsum = RECT_SUM (p, a, b, c, d);
#endif
  const uint valsqsum = (uint) RECT_SUM32 (q, a, b, c, d);
#ifdef HAVE_FP64
  const double area = (double) ((WIN_W - 2) * (WIN_H - 2));
  double nf = area * (double) valsqsum - (double) valsum * (double) valsum;
  if (nf > 0.0) {
    nf = sqrt (nf);
    *vnf = (float) (1.0 / nf);
    return area * (double) *vnf < 1e-1;
  }
#else
  const float area = (float) ((WIN_W - 2) * (WIN_H - 2));
  float nf = area * (float) valsqsum - (float) valsum * (float) valsum;
  if (nf > 0.0f) {
    nf = sqrt (nf);
    *vnf = 1.0f / nf;
    return area * *vnf < 1e-1f;
  }
#endif
  *vnf = 1.0f;
  return 0;
#else
  *vnf = 1.0f;
  return 1;
#endif
}

/* Appends the kept lanes' windows to the list, in lane order (rank and total
 * from wg_rank).  Called by the whole work-group. */
inline void append_kept (int keep, uint win, uint ofs, int rank, int total, int lid, __local uint *sbase,
                         __global uint2 *list, __global uint *counters)
{
  const uint first = wg_reserve (total, &counters[0], sbase, lid);
  if (keep)
    list[first + rank] = (uint2) (win, ofs);
  barrier (CLK_LOCAL_MEM_FENCE);
}

/* segs: one int2 per work-group: (level | nrows << 10, first row).  The
 * segment's windows are numbered p = row * nx + x; those OpenCV evaluates
 * follow from the last window before p in the same row that stage 0 did not
 * reject (a): p is evaluated iff p - a - 1 is even.
 * With more generated stages (SPEC_STAGES > 1), the windows that pass stage 0
 * gather in local memory until WGF of them are there, and every lane takes
 * one through stages 1..SPEC_STAGES-1; only their survivors join the list. */
#if SPEC_STAGES > 1
/* Stages 1..SPEC_STAGES-1 over the first n queued windows; survivors appended
 * to the list.  Called by the whole work-group. */
inline void first_batch (int n, int lid, __local const uint *qwin, __local const uint *qofs,
                         __local const float *qvnf, __local int *ssum, __local uint *sbase,
                         __global const sum_t *sum, __global const uint *tilted, int stride, __global uint2 *list,
                         __global uint *counters)
{
  int pass = 0;
  uint win = 0, ofs = 0;
  if (lid < n) {
    ofs = qofs[lid];
    win = qwin[lid];
#ifdef FEATURE_HAAR
    const float vnf = qvnf[lid];
#else
    const float vnf = 1.0f;
#endif
    pass = 1;
    for (int si = 1; si < SPEC_STAGES && pass; si++)
      pass = spec_stage_passes (si, sum + ofs, tilted + ofs, stride, vnf);
  }
  int total;
  const int rank = wg_rank (pass, lid, ssum, &total);
  append_kept (pass, win, ofs, rank, total, lid, sbase, list, counters);
}
#endif

__kernel __attribute__ ((reqd_work_group_size (WGF, 1, 1))) void
cascade_first (__global const int8 *levels, __global const int2 *segs, __global const sum_t *sum,
               __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
               __global uint2 *list, __global uint *counters)
{
  __local int smax[WGF];
  __local int ssum[WGF];
  __local uint sbase;
#if SPEC_STAGES > 1
  __local uint qwin[2 * WGF], qofs[2 * WGF];
#ifdef FEATURE_HAAR
  __local float qvnf[2 * WGF];
#else
  __local float *qvnf = 0;
#endif
  int qn = 0; /* windows queued, the same in every lane */
#endif
  const int lid = get_local_id (0);
  const int2 sg = segs[get_group_id (0)];
  const int8 L = levels[sg.x & 1023];
  const int nrows = sg.x >> 10, y0 = sg.y;
  const int nx = L.s4, s = L.s6;
  const int total = nrows * nx;
  int carry = -1; /* last non-rejected window of the chunks before */
  for (int c0 = 0; c0 < total; c0 += WGF) {
    const int p = c0 + lid;
    const int valid = p < total;
    const int r = valid ? p / nx : 0, x = valid ? p - r * nx : 0;
    int code = CODE_REJECT0;
    const size_t ofs = (size_t) (L.s1 + (y0 + r) * s) * stride + L.s0 + x * s;
    float vnf = 1.0f;
    if (valid) {
      if (!window_norm (sum + ofs, sqsum + ofs, stride, &vnf))
        code = CODE_INVALID;
      else
        code = STAGE_PASSES (0, sum + ofs, tilted + ofs, stride, vnf) ? CODE_PASS0 : CODE_REJECT0;
    }
    /* the last non-rejected position before each lane's */
    int last;
    const int last_before = wg_max_before (valid && code != CODE_REJECT0 ? p : -1, lid, smax, &last);
    const int before = max (max (p - x - 1, carry), last_before);
    const int keep = valid && code == CODE_PASS0 && !((p - before - 1) & 1);
    /* the kept windows' order in the list */
    int added;
    const int rank = wg_rank (keep, lid, ssum, &added);
    carry = max (carry, last);
    const uint win = (uint) (L.s7 + (y0 + r) * nx + x);
#if SPEC_STAGES > 1
    if (keep) {
      const int slot = qn + rank;
      qwin[slot] = win;
      qofs[slot] = (uint) ofs;
#ifdef FEATURE_HAAR
      qvnf[slot] = vnf;
#endif
    }
    qn += added;
    barrier (CLK_LOCAL_MEM_FENCE);
    if (qn >= WGF) {
      first_batch (WGF, lid, qwin, qofs, qvnf, ssum, &sbase, sum, tilted, stride, list, counters);
      qn -= WGF; /* qn < WGF: the rest moves to the front, no overlap */
      if (lid < qn) {
        qwin[lid] = qwin[WGF + lid];
        qofs[lid] = qofs[WGF + lid];
#ifdef FEATURE_HAAR
        qvnf[lid] = qvnf[WGF + lid];
#endif
      }
      barrier (CLK_LOCAL_MEM_FENCE);
    }
#else
    append_kept (keep, win, (uint) ofs, rank, added, lid, &sbase, list, counters);
#endif
  }
#if SPEC_STAGES > 1
  if (qn > 0)
    first_batch (qn, lid, qwin, qofs, qvnf, ssum, &sbase, sum, tilted, stride, list, counters);
#endif
}

#ifndef LIST_CHUNK
#define LIST_CHUNK 512 /* the host passes its own; 512 is its default too */
#endif
#define WGL 256
#ifndef LIST_MAXG
#define LIST_MAXG 256 /* 256 against 32: 2-6 % less time for Haar models on an H100 */
#endif
#ifndef LIST_FILL
#define LIST_FILL 2
#endif
#define LIST_GROUPS (WGL / 32)
/* The stages after cascade_first's (SPEC_STAGES) over the list, up to
 * LIST_CHUNK windows at a time per work-group.  All windows of a work-group
 * are at the same stage, so model reads are uniform; survivors are compacted
 * after every stage.  With fp64, G lanes share a window's trees once n * G
 * fills at most 1 / LIST_FILL of the work-group (G a power of two, at most
 * LIST_MAXG and the stage's tree count); with G = 1 each lane sums its
 * window's trees in order, as OpenCV does. */
__kernel __attribute__ ((reqd_work_group_size (WGL, 1, 1))) void
cascade_list (__global const sum_t *sum, __global const uint *sqsum, __global const uint *tilted, int stride,
              MODEL_ARGS, __global const uint2 *list,
              __global uint *counters, __global uint *hits, uint hit_capacity)
{
  __local uint lofs[LIST_CHUNK];
#ifdef FEATURE_HAAR
  __local float lvnf[LIST_CHUNK];
#endif
  __local ushort q[2][LIST_CHUNK];
  __local int gcnt[LIST_GROUPS];
  __local uint lbase;
  __local acc_t part[WGL];
  const int lid = get_local_id (0);
  const uint ntotal = counters[0];
  /* a short list is shared by more work-groups: chunks of at least 64
   * windows, and no more than every work-group gets one */
  const uint per_group = (ntotal + get_num_groups (0) - 1) / get_num_groups (0);
  const uint chunk = clamp ((per_group + 31u) & ~31u, 64u, (uint) LIST_CHUNK);
  for (uint base; (base = worklist_take (&counters[1], chunk, &lbase, lid)) < ntotal;) {
    int n = (int) min (chunk, ntotal - base);
    for (int i = lid; i < n; i += WGL) {
      const uint ofs = list[base + i].y;
      lofs[i] = ofs;
#ifdef FEATURE_HAAR
      float vnf;
      window_norm (sum + ofs, sqsum + ofs, stride, &vnf);
      lvnf[i] = vnf;
#endif
      q[0][i] = (ushort) i;
    }
    int cur = 0;
    if (lid < LIST_GROUPS)
      gcnt[lid] = 0;
    barrier (CLK_LOCAL_MEM_FENCE);
    for (int si = SPEC_STAGES; si < nstages && n > 0; si++) {
      const stage_t st = stages[si];
      int kept = 0; /* survivors so far, the same in every lane */
      barrier (CLK_LOCAL_MEM_FENCE);
      /* G lanes per window: up to LIST_MAXG while the windows fill at most
       * 1 / LIST_FILL of the work-group */
      int G = 1;
#ifdef HAVE_FP64
      while (G < LIST_MAXG && G < st.ntrees && n * G * LIST_FILL <= WGL)
        G <<= 1;
#endif
      const int per_pass = WGL / G, sub = lid % G;
      for (int i0 = 0; i0 < n; i0 += per_pass) {
        const int i = i0 + lid / G;
        acc_t acc = 0;
        int w = 0, pass = 0;
        if (i < n) {
          w = q[cur][i];
#ifdef FEATURE_HAAR
          const float vnf = lvnf[w];
#else
          const float vnf = 1.0f;
#endif
          if (G == 1)
            /* stages from the model in memory: generated code here took
             * alt2's later stages 27 % longer on an H100 */
            pass = stage_passes (sum + lofs[w], tilted + lofs[w], stride, vnf, si, MODEL_PASS);
          else
            for (int t = sub; t < st.ntrees; t += G)
              acc += (acc_t) tree_value (sum + lofs[w], tilted + lofs[w], stride, vnf, st.first_tree + t, trees,
                                         nodes, stumps, leaves, features, fofs, subsets);
        }
        part[lid] = acc;
        barrier (CLK_LOCAL_MEM_FENCE);
        for (int off = G >> 1; off > 0; off >>= 1) {
          if (sub < off)
            part[lid] += part[lid + off];
          barrier (CLK_LOCAL_MEM_FENCE);
        }
        if (G > 1)
          pass = !(part[lid] < (acc_t) st.threshold);
        const int keep = i < n && sub == 0 && pass;
        /* The survivors keep their order group by group of 32 lanes (within
         * a group, in the order of its atomic increments), so that the next
         * stage's lanes take windows that lie together: their loads share
         * more sectors. */
        const int grp = lid >> 5;
        const int slot = keep ? atomic_inc (&gcnt[grp]) : 0;
        barrier (CLK_LOCAL_MEM_FENCE);
        int before = 0, total = 0;
        for (int k = 0; k < LIST_GROUPS; k++) {
          before += k < grp ? gcnt[k] : 0;
          total += gcnt[k];
        }
        if (keep)
          q[cur ^ 1][kept + before + slot] = (ushort) w;
        kept += total;
        barrier (CLK_LOCAL_MEM_FENCE);
        /* the counts start again before the next pass's increments, which
         * follow its first barrier */
        if (lid < LIST_GROUPS)
          gcnt[lid] = 0;
      }
      n = kept;
      cur ^= 1;
    }
    /* cascades have no score of their own: the host's grouping makes the
     * confidence */
    for (int i = lid; i < n; i += WGL)
      candidate_emit (hits, hit_capacity, list[base + q[cur][i]].x, 0.0f);
    barrier (CLK_LOCAL_MEM_FENCE);
  }
}

/* CPU schedule: OpenCV's loop over one row of windows (every stage, the
 * window after a stage-0 rejection skipped).  With VEC_STAGES (LBP stumps,
 * Haar models without tilted features), the generated stages 0..VEC_STAGES-1 run over 16 adjacent windows of the
 * row at once and the loop reads their results: a window rejected by one of
 * them is done, one that passed them all goes on with the later stages (a
 * flat Haar window is refused as OpenCV does).  The 16 windows' loads may
 * reach past the row's last window: the integral buffers have room for it.
 * wrow_map: level | iy << 10. */
__kernel void
cascade_rows (__global const int8 *levels, __global const int *wrow_map, int nrows, __global const sum_t *sum,
              __global const uint *sqsum, __global const uint *tilted, int stride, MODEL_ARGS,
              __global uint *hits, uint hit_capacity)
{
  LEVEL_ENTRY (wrow_map, nrows, L, iy);
  const int s = L.s6;
  const size_t row = (size_t) (L.s1 + iy * s) * stride + L.s0;
  int skip = 0;
#ifdef VEC_STAGES
  int depth[16]; /* stages passed by the windows ix & ~15 .. (ix & ~15) + 15 */
#endif
  for (int ix = 0; ix < L.s4; ix++) {
#ifdef VEC_STAGES
    if ((ix & 15) == 0) {
      __global const sum_t *p = sum + row + ix * s;
      __global const uint *q = sqsum + row + ix * s;
      vstore16 (s == 1 ? vec_stages_step1 (p, q, stride) : vec_stages_step2 (p, q, stride), 0, depth);
    }
#endif
    if (skip) {
      skip = 0;
      continue;
    }
    const size_t ofs = row + ix * s;
    float vnf = 1.0f;
#ifdef VEC_STAGES
    const int d = depth[ix & 15];
    if (d < 0) /* flat (Haar): refused, no skip */
      continue;
    if (d == 0) {
      skip = 1;
      continue;
    }
    if (d < VEC_STAGES)
      continue;
    int si = VEC_STAGES;
#ifdef FEATURE_HAAR
    window_norm (sum + ofs, sqsum + ofs, stride, &vnf); /* the later stages' factor */
#endif
#else
    if (!window_norm (sum + ofs, sqsum + ofs, stride, &vnf))
      continue;
    if (!STAGE_PASSES (0, sum + ofs, tilted + ofs, stride, vnf)) {
      skip = 1;
      continue;
    }
    int si = 1;
#endif
    for (; si < nstages; si++)
      if (!STAGE_PASSES (si, sum + ofs, tilted + ofs, stride, vnf))
        break;
    if (si == nstages)
      candidate_emit (hits, hit_capacity, L.s7 + iy * L.s4 + ix, 0.0f);
  }
}
