// Which family reads a model file, decided by the file's content: the table
// in registry.cpp is the one place that knows every family.
#pragma once

#include "cl/error.h"
#include "core/family.h"

#include <memory>
#include <string>
#include <vector>

namespace gpudetect {

// Reads the model file at `path` and makes the family that evaluates it.
// Returns an empty string on success, else a message naming the file and
// what is wrong with it.
// Every family's expert knobs (Tuning::family), for parse_tuning.
const std::vector<std::string> &family_option_keys ();

Error load_family (const std::string &path, std::unique_ptr<Family> *out);

// The same for a model file's text already in memory (`path` names it in
// messages and gives the default label); load_family reads the file and calls
// this.
Error load_family_text (const std::string &path, const std::string &text, std::unique_ptr<Family> *out);

// The formats the registry knows, for messages ("an OpenCV cascade (...)").
std::string known_model_formats ();

} // namespace gpudetect
