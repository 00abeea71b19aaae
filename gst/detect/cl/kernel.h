// Typed kernels: a kernel declared with its argument types, whose arguments
// are set in one call checked against them by count and type at compile
// time (as CLHPP's KernelFunctor): a changed signature fails to build, not
// at run time.  Creation checks the count against the program's kernel.
#pragma once

#include "cl.h"

#include <array>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

namespace gpudetect {
namespace cl {

// A `__local` pointer argument: its size in bytes.
struct Local {
  size_t bytes = 0;
};
inline cl_int set_arg (cl_kernel k, cl_uint i, const Local &l) { return clSetKernelArg (k, i, l.bytes, nullptr); }

template <typename... A> class TypedKernel {
public:
  Error create (const Program &p, const char *name) {
    if (Error e = create_kernel (p, name, &k_))
      return e;
    name_ = name;
    set_.fill (false);
    cl_uint n = 0;
    GPUDETECT_CL_TRY (clGetKernelInfo (k_.get (), CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr));
    if (n != sizeof...(A))
      return {"kernel " + name_ + " takes " + std::to_string (n) + " arguments, the host gives " +
              std::to_string (sizeof...(A))};
    return {};
  }

  // Every argument, in the kernel's order; only those that changed since the
  // last call reach the driver (buffers compared by identity, Handle::id, not
  // by their handles' values, which a released buffer's can take again).
  template <typename... B> Error set (const B &...b) {
    static_assert (sizeof...(B) == sizeof...(A), "argument count differs from the kernel's signature");
    static_assert ((std::is_same_v<B, A> && ...), "argument type differs from the kernel's signature");
    return set_all (std::index_sequence_for<A...> {}, b...);
  }

  cl_kernel get () const { return k_.get (); }
  explicit operator bool () const { return static_cast<bool> (k_); }
  const std::string &name () const { return name_; }

private:
  template <size_t... I> Error set_all (std::index_sequence<I...>, const A &...a) {
    cl_int st = CL_SUCCESS;
    size_t bad = 0;
    ((st == CL_SUCCESS ? (st = update<I> (a), bad = I) : 0), ...);
    if (st != CL_SUCCESS)
      return {"argument " + std::to_string (bad) + " of kernel " + name_ + ": " + status_to_string (st)};
    return {};
  }

  template <size_t I, typename T> cl_int update (const T &v) {
    if constexpr (std::is_same_v<T, Mem>) {
      uint64_t &last = std::get<I> (last_);
      if (set_[I] && last == v.id ())
        return CL_SUCCESS;
      const cl_int st = set_arg (k_.get (), I, v);
      if (st == CL_SUCCESS) {
        last = v.id ();
        set_[I] = true;
      }
      return st;
    } else {
      static_assert (std::is_trivially_copyable_v<T>, "kernel arguments are buffers or plain values");
      T &last = std::get<I> (last_);
      if (set_[I] && std::memcmp (&last, &v, sizeof v) == 0)
        return CL_SUCCESS;
      const cl_int st = set_arg (k_.get (), I, v);
      if (st == CL_SUCCESS) {
        last = v;
        set_[I] = true;
      }
      return st;
    }
  }

  // The last value of each argument (a buffer's identity).
  template <typename T> using Stored = std::conditional_t<std::is_same_v<T, Mem>, uint64_t, T>;
  Kernel k_;
  std::string name_;
  std::tuple<Stored<A>...> last_ {};
  std::array<bool, sizeof...(A) + 1> set_ {};
};

} // namespace cl
} // namespace gpudetect
