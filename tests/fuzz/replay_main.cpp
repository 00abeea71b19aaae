// A main for the fuzz targets where libFuzzer is not linked (the normal
// build, any compiler): runs LLVMFuzzerTestOneInput once on every file named
// on the command line and on every file in the directories named there, so
// that the seed corpora and the kept crash inputs are regression tests.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>
#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static bool is_dir (const std::string &p) {
  struct stat st;
  return stat (p.c_str (), &st) == 0 && S_ISDIR (st.st_mode);
}

int main (int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    struct stat st;
    if (stat (a.c_str (), &st) != 0) {
      // A target whose fuzzing has kept no crash input has no directory.
      std::fprintf (stderr, "%s: none\n", a.c_str ());
      continue;
    }
    if (!is_dir (a)) {
      files.push_back (a);
      continue;
    }
    std::vector<std::string> in_dir;
    if (DIR *d = opendir (a.c_str ())) {
      while (dirent *e = readdir (d))
        if (e->d_name[0] != '.' && std::strcmp (e->d_name, "README.md") != 0)
          in_dir.push_back (a + "/" + e->d_name);
      closedir (d);
    }
    std::sort (in_dir.begin (), in_dir.end ());
    files.insert (files.end (), in_dir.begin (), in_dir.end ());
  }
  int ran = 0;
  for (const std::string &f : files) {
    std::ifstream in (f, std::ios::binary);
    if (!in) {
      std::fprintf (stderr, "cannot read %s\n", f.c_str ());
      return 1;
    }
    std::string bytes ((std::istreambuf_iterator<char> (in)), std::istreambuf_iterator<char> ());
    std::fprintf (stderr, "%s (%zu bytes)\n", f.c_str (), bytes.size ());
    LLVMFuzzerTestOneInput (reinterpret_cast<const uint8_t *> (bytes.data ()), bytes.size ());
    ran++;
  }
  std::printf ("%d inputs, no crash, every property held\n", ran);
  return ran > 0 ? 0 : 1;
}
