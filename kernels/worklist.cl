/* Lists of windows that a family's kernels hand on to the next (cascade.cl,
 * waldboost.cl, forest.cl): persistent work-groups take a list a chunk at a
 * time, and a work-group appends its lanes' surviving windows in lane order
 * (compact.cl's wg_rank and wg_reserve).  Needs compact.cl before it. */

/* The first item of the work-group's next chunk of `size` items, handed out
 * through *next; past the list's count once it is done.  Called by the whole
 * work-group. */
inline uint worklist_take (__global uint *next, uint size, __local uint *lbase, int lid)
{
  if (lid == 0)
    *lbase = atomic_add (next, size);
  barrier (CLK_LOCAL_MEM_FENCE);
  return *lbase;
}

/* NAME: lane lid's item of the chunk at `base` of a list of n items of T
 * (*alive 0 and zeros past the list). */
#define WORKLIST_LOAD(NAME, T)                                                                                   \
  inline T NAME (__global const T *in, uint base, uint n, int lid, int *alive)                                 \
  {                                                                                                            \
    T it = {0};                                                                                                \
    *alive = base + lid < n;                                                                                   \
    if (*alive)                                                                                                \
      it = in[base + lid];                                                                                     \
    return it;                                                                                                 \
  }

/* The first of the places of the work-group's `total` kept items in a list
 * of at most cap items whose count is *count; the items that do not fit are
 * counted in the candidates' lost counter (candidates.cl).  Called by the
 * whole work-group. */
inline uint worklist_reserve (int total, __global uint *count, uint cap, __global uint *cand, __local uint *sbase,
                              int lid)
{
  const uint base = wg_reserve (total, count, sbase, lid);
  if (lid == 0 && base + (uint) total > cap)
    atomic_add (&cand[1], base + (uint) total - max (base, cap));
  return base;
}

/* Lane lid's window of a work-group over a segment of WGF windows of a
 * level (segs: an int2 per work-group, the level and its first window
 * there): its index in the level, the level's descriptor in *L (nx, ny in
 * s4, s5) and the window's place in its grid in *ix, *iy (0, 0 and *alive 0
 * past the level's last window). */
inline int segment_window (__global const int8 *levels, __global const int2 *segs, int lid, int8 *L, int *alive,
                           int *ix, int *iy)
{
  const int2 sg = segs[get_group_id (0)];
  const int8 l = levels[sg.x];
  const int i = sg.y + lid;
  const int a = i < l.s4 * l.s5;
  const int y = a ? i / l.s4 : 0;
  *L = l;
  *alive = a;
  *iy = y;
  *ix = a ? i - y * l.s4 : 0;
  return i;
}
