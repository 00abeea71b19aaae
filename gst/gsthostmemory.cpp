#include "gsthostmemory.h"

#include "cl/cl.h"

#include <cstring>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_detect_host_memory_debug);
#define GST_CAT_DEFAULT gst_gpu_detect_host_memory_debug

namespace {

// A GstMemory over one host block.  Shared sub-memories point at their
// root's block; only the root owns it.
struct HostMemory {
  GstMemory mem;
  gpudetect::cl::HostBlock *block;
  bool owns_block;
};

} // namespace

struct _GstGpuDetectHostAllocator {
  GstAllocator parent;
  std::shared_ptr<gpudetect::cl::HostAllocator> *blocks;
};

G_DEFINE_TYPE (GstGpuDetectHostAllocator, gst_gpu_detect_host_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *host_alloc (GstAllocator *allocator, gsize size, GstAllocationParams *params)
{
  GstGpuDetectHostAllocator *self = GST_GPU_DETECT_HOST_ALLOCATOR (allocator);
  // params->align is a mask: room for moving the start to the next boundary
  const gsize maxsize = size + params->prefix + params->padding + params->align;
  std::unique_ptr<gpudetect::cl::HostBlock> block;
  if (gpudetect::Error e = (*self->blocks)->alloc (maxsize, &block)) {
    GST_WARNING_OBJECT (self, "cannot allocate %" G_GSIZE_FORMAT " bytes of page-locked memory: %s", maxsize,
                        e.message.c_str ());
    return nullptr;
  }
  auto *data = static_cast<guint8 *> (block->data ());
  const gsize shift = (params->align + 1 - (reinterpret_cast<guintptr> (data) & params->align)) & params->align;
  auto *m = g_new0 (HostMemory, 1);
  m->block = block.release ();
  m->owns_block = true;
  gst_memory_init (GST_MEMORY_CAST (m), params->flags, allocator, nullptr, maxsize, params->align,
                   shift + params->prefix, size);
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset (data + shift, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset (data + shift + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST (m);
}

static void host_free (GstAllocator *, GstMemory *mem)
{
  auto *m = reinterpret_cast<HostMemory *> (mem);
  if (m->owns_block)
    delete m->block;
  g_free (m);
}

static gpointer host_map (GstMemory *mem, gsize, GstMapFlags)
{
  return reinterpret_cast<HostMemory *> (mem)->block->data ();
}

static void host_unmap (GstMemory *) {}

static GstMemory *host_share (GstMemory *mem, gssize offset, gssize size)
{
  auto *m = reinterpret_cast<HostMemory *> (mem);
  GstMemory *parent = mem->parent ? mem->parent : mem;
  if (size == -1)
    size = mem->size - offset;
  auto *sub = g_new0 (HostMemory, 1);
  sub->block = m->block;
  sub->owns_block = false;
  gst_memory_init (GST_MEMORY_CAST (sub),
                   static_cast<GstMemoryFlags> (GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
                   mem->allocator, parent, mem->maxsize, mem->align, mem->offset + offset, size);
  return GST_MEMORY_CAST (sub);
}

static void gst_gpu_detect_host_allocator_finalize (GObject *object)
{
  GstGpuDetectHostAllocator *self = GST_GPU_DETECT_HOST_ALLOCATOR (object);
  delete self->blocks;
  G_OBJECT_CLASS (gst_gpu_detect_host_allocator_parent_class)->finalize (object);
}

static void gst_gpu_detect_host_allocator_class_init (GstGpuDetectHostAllocatorClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstAllocatorClass *allocator_class = GST_ALLOCATOR_CLASS (klass);
  gobject_class->finalize = gst_gpu_detect_host_allocator_finalize;
  allocator_class->alloc = host_alloc;
  allocator_class->free = host_free;
  GST_DEBUG_CATEGORY_INIT (gst_gpu_detect_host_memory_debug, "gpudetecthostmemory", 0,
                           "gpudetect page-locked frame memory");
}

static void gst_gpu_detect_host_allocator_init (GstGpuDetectHostAllocator *self)
{
  GstAllocator *a = GST_ALLOCATOR_CAST (self);
  a->mem_type = GST_GPU_DETECT_HOST_MEMORY_TYPE;
  a->mem_map = host_map;
  a->mem_unmap = host_unmap;
  a->mem_share = host_share;
  self->blocks = new std::shared_ptr<gpudetect::cl::HostAllocator> ();
}

GstAllocator *gst_gpu_detect_host_allocator_new (std::shared_ptr<gpudetect::cl::HostAllocator> blocks)
{
  auto *self = GST_GPU_DETECT_HOST_ALLOCATOR (g_object_new (GST_TYPE_GPU_DETECT_HOST_ALLOCATOR, nullptr));
  *self->blocks = std::move (blocks);
  gst_object_ref_sink (self);
  return GST_ALLOCATOR_CAST (self);
}

bool gst_is_gpu_detect_host_memory (GstMemory *mem)
{
  return mem && gst_memory_is_type (mem, GST_GPU_DETECT_HOST_MEMORY_TYPE);
}

GstBufferPool *gst_gpu_detect_host_pool_new (GstAllocator *allocator, GstCaps *caps, guint *size)
{
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return nullptr;
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  *size = static_cast<guint> (GST_VIDEO_INFO_SIZE (&info));
  gst_buffer_pool_config_set_params (config, caps, *size, 0, 0);
  gst_buffer_pool_config_set_allocator (config, allocator, nullptr);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  return pool;
}

void gst_gpu_detect_host_pool_offer (GstObject *element, GstAllocator *allocator, GstQuery *query, GstCaps *caps,
                                     guint min_buffers)
{
  guint size = 0;
  GstBufferPool *pool = gst_gpu_detect_host_pool_new (allocator, caps, &size);
  if (!pool)
    return;
  GST_DEBUG_OBJECT (element, "offering a page-locked pool of %u-byte buffers for %" GST_PTR_FORMAT, size, caps);
  gst_query_add_allocation_pool (query, pool, size, min_buffers, 0);
  gst_object_unref (pool);
  // Upstream configures the pool with the first allocator of the answer:
  // ours goes first, before any proposed downstream (kept after it).
  std::vector<std::pair<GstAllocator *, GstAllocationParams>> others;
  while (gst_query_get_n_allocation_params (query) > 0) {
    GstAllocator *a = nullptr;
    GstAllocationParams p;
    gst_query_parse_nth_allocation_param (query, 0, &a, &p);
    others.emplace_back (a, p);
    gst_query_remove_nth_allocation_param (query, 0);
  }
  GstAllocationParams params;
  gst_allocation_params_init (&params);
  gst_query_add_allocation_param (query, allocator, &params);
  for (auto &[a, p] : others) {
    gst_query_add_allocation_param (query, a, &p);
    if (a)
      gst_object_unref (a);
  }
  if (!gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr))
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
}
