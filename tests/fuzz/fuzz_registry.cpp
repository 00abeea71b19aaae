// The model registry (families/registry.cpp) over any bytes: it sniffs the
// format and hands the text to the family that claims it.  Beyond "no
// crash": every refusal names the file, and a model that loads gives a family
// with a window, a family name and the label its file name suggests.
#include "fuzz.h"

#include "families/registry.h"

using namespace gpudetect;

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  static const std::string kPath = "fuzz/frontalface.xml";
  std::unique_ptr<Family> f;
  const std::string err = load_family_text (kPath, fuzz_text (data, size), &f).message;
  if (!err.empty ()) {
    FUZZ_CHECK (err.rfind ("model file '" + kPath + "'", 0) == 0, "a refusal that does not name the file: %s",
                err.c_str ());
    FUZZ_CHECK (!f, "a refused model still made a family: %s", err.c_str ());
    return 0;
  }
  FUZZ_CHECK (f, "success without a family");
  const ModelInfo &info = f->info ();
  FUZZ_CHECK (info.window.width >= 1 && info.window.height >= 1, "window %dx%d", info.window.width,
              info.window.height);
  FUZZ_CHECK (!info.family.empty () && info.label == "face" && info.path == kPath, "info '%s' '%s' '%s'",
              info.family.c_str (), info.label.c_str (), info.path.c_str ());
  return 0;
}
