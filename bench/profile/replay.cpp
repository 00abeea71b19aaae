// replay: runs a kernel launch captured by clcapture through NVIDIA's CUDA
// driver, from the program's PTX, so that Nsight Compute can profile it:
//
//   replay DIR [REPEAT]
//   ncu --set full -s 2 -c 1 replay DIR 3
//
// Every buffer is restored from DIR before each launch; the median time of the
// launches (CUDA events) is printed.
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      const char *s_ = nullptr;                                                                    \
      cuGetErrorString (r_, &s_);                                                                  \
      std::fprintf (stderr, "%s: %s\n", #x, s_ ? s_ : "?");                                        \
      std::exit (1);                                                                               \
    }                                                                                              \
  } while (0)

static std::string slurp (const std::string &p) {
  std::ifstream f (p, std::ios::binary);
  return std::string ((std::istreambuf_iterator<char> (f)), std::istreambuf_iterator<char> ());
}

int main (int argc, char **argv) {
  if (argc < 2) {
    std::fprintf (stderr, "usage: replay DIR [REPEAT]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int repeat = argc > 2 ? std::atoi (argv[2]) : 20;
  std::string ptx = slurp (dir + "/program.bin");
  ptx = ptx.substr (0, ptx.find ('\0'));
  if (size_t m = ptx.find (".metadata_section"); m != std::string::npos)
    ptx = ptx.substr (0, ptx.rfind ('\n', m) + 1);
  // NVIDIA's OpenCL kernels read the launch's work-group offset (%envreg0-2),
  // global offset (%envreg3-5) and work-group count (%envreg6-8) from
  // registers that a CUDA launch does not set: offsets 0, counts the grid's.
  for (int r = 8; r >= 0; r--) {
    const std::string reg = "%envreg" + std::to_string (r);
    const std::string by = r >= 6 ? std::string ("%nctaid.") + "xyz"[r - 6] : "0";
    for (size_t at = ptx.find (reg); at != std::string::npos; at = ptx.find (reg, at + by.size ()))
      ptx.replace (at, reg.size (), by);
  }
  std::istringstream launch (slurp (dir + "/launch.txt"));
  std::string name;
  size_t global = 0, local = 0;
  launch >> name >> global >> local;
  CK (cuInit (0));
  CUdevice dev;
  CK (cuDeviceGet (&dev, 0));
  CUcontext ctx;
  CK (cuDevicePrimaryCtxRetain (&ctx, dev));
  CK (cuCtxSetCurrent (ctx));
  CUmodule mod;
  CK (cuModuleLoadData (&mod, ptx.c_str ()));
  CUfunction fn;
  CK (cuModuleGetFunction (&fn, mod, name.c_str ()));
  struct Arg {
    bool buf = false;
    std::string host;
    CUdeviceptr dptr = 0;
    unsigned char val[16] = {};
  };
  std::vector<Arg> args;
  std::string kind;
  while (launch >> kind) {
    Arg a;
    if (kind == "buf") {
      int idx;
      size_t size;
      launch >> idx >> size;
      a.buf = true;
      a.host = slurp (dir + "/buf" + std::to_string (idx) + ".bin");
      CK (cuMemAlloc (&a.dptr, std::max<size_t> (a.host.size (), 16)));
    } else {
      size_t size;
      std::string hex;
      launch >> size >> hex;
      for (size_t j = 0; j < size; j++)
        a.val[j] = static_cast<unsigned char> (std::stoi (hex.substr (2 * j, 2), nullptr, 16));
    }
    args.push_back (std::move (a));
  }
  std::vector<void *> params;
  for (Arg &a : args)
    params.push_back (a.buf ? static_cast<void *> (&a.dptr) : static_cast<void *> (a.val));
  int regs = 0, smem = 0;
  cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  cuFuncGetAttribute (&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  int blocks_per_sm = 0;
  cuOccupancyMaxActiveBlocksPerMultiprocessor (&blocks_per_sm, fn, static_cast<int> (local), 0);
  CUevent e0, e1;
  CK (cuEventCreate (&e0, 0));
  CK (cuEventCreate (&e1, 0));
  std::vector<float> ms;
  for (int r = 0; r < repeat; r++) {
    for (Arg &a : args)
      if (a.buf)
        CK (cuMemcpyHtoD (a.dptr, a.host.data (), a.host.size ()));
    CK (cuCtxSynchronize ());
    CK (cuEventRecord (e0, nullptr));
    CK (cuLaunchKernel (fn, static_cast<unsigned> (global / local), 1, 1, static_cast<unsigned> (local), 1, 1, 0,
                        nullptr, params.data (), nullptr));
    CK (cuEventRecord (e1, nullptr));
    CK (cuEventSynchronize (e1));
    float t = 0;
    CK (cuEventElapsedTime (&t, e0, e1));
    ms.push_back (t);
  }
  std::sort (ms.begin (), ms.end ());
  std::printf ("%s: %zu work-groups of %zu, %d registers, %d bytes local, %d work-groups per SM; median %.4f ms over %d\n",
               name.c_str (), global / local, local, regs, smem, blocks_per_sm, ms[ms.size () / 2], repeat);
  return 0;
}
