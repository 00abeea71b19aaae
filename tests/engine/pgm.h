// The grey images of the engine tests: binary PGM (P5) with 255 levels, as
// gpudetect-make-frames and the build write them.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

struct Grey {
  std::string name; // the file's name without its directory
  int cols = 0, rows = 0;
  std::vector<uint8_t> px;
  uint8_t at (int y, int x) const { return px[static_cast<size_t> (y) * cols + x]; }
};

inline bool read_pgm (const std::string &path, Grey *g) {
  std::ifstream f (path, std::ios::binary);
  std::string magic;
  int maxval = 0;
  if (!(f >> magic >> g->cols >> g->rows >> maxval) || magic != "P5" || maxval != 255 || g->cols <= 0 || g->rows <= 0)
    return false;
  f.get ();
  g->px.resize (static_cast<size_t> (g->cols) * g->rows);
  f.read (reinterpret_cast<char *> (g->px.data ()), g->px.size ());
  g->name = path.substr (path.find_last_of ('/') + 1);
  return static_cast<bool> (f);
}
