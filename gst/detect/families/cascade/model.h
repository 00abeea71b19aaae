// In-memory form of a boosted cascade (OpenCV's cascade XML: stageType BOOST,
// featureType HAAR or LBP, stumps or small trees), and its loader.
#pragma once

#include "cl/error.h"
#include <libxml/tree.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpudetect {

struct CascadeModel {
  enum class FeatureType { Haar, Lbp };

  struct Stage {
    float threshold = 0; // already lowered by OpenCV's 1e-5 epsilon
    int first_tree = 0;
    int ntrees = 0;
  };
  struct Tree {
    int first_node = 0; // index into nodes
    int node_count = 0;
    int first_leaf = 0; // index into leaves; node_count + 1 leaves
  };
  // left/right > 0: index of the next node inside the tree; <= 0: -leaf index.
  struct Node {
    int left = 0, right = 0, feature = 0;
    float threshold = 0;      // ordered (Haar) nodes
    uint32_t subset[8] = {};  // categorical (LBP) nodes: 256-bit category set
  };
  struct HaarRect {
    int x = 0, y = 0, w = 0, h = 0;
    float weight = 0;
  };
  struct HaarFeature {
    HaarRect rect[3];
    bool tilted = false;
  };
  struct LbpFeature {
    int x = 0, y = 0, w = 0, h = 0; // one of the 3x3 blocks
  };

  FeatureType feature_type = FeatureType::Haar;
  int window_width = 0, window_height = 0;
  int ncategories = 0;
  int max_nodes_per_tree = 0;
  bool has_tilted = false;
  std::vector<Stage> stages;
  std::vector<Tree> trees;
  std::vector<Node> nodes;
  std::vector<float> leaves;
  std::vector<HaarFeature> haar_features;
  std::vector<LbpFeature> lbp_features;

  std::string path;          // file it was read from
  std::string default_label; // e.g. "face", derived from the file name

  size_t feature_count () const {
    return feature_type == FeatureType::Haar ? haar_features.size () : lbp_features.size ();
  }
};

// Parses OpenCV cascade XML from memory.  Returns an empty string on success,
// else a message naming what is wrong.  Never crashes on hostile input: no
// network or DTD loading, entity declarations refused, sizes and indices
// bounded and checked.
Error parse_cascade_xml (const std::string &xml, CascadeModel *out);

// The same from a parsed document's root element (<opencv_storage>).
Error read_cascade_storage (const xmlNode *top, CascadeModel *out);
// Whether a root element is a cascade's storage: <opencv_storage> whose first
// node is <cascade> or holds a cascade's elements (stageType, stages, ...; or
// an old-format cascade, which read_cascade_storage names).
bool is_cascade_storage (const xmlNode *top);

// Reads and parses a file (at most 64 MiB); `path` and `default_label` are
// set from the file's name.
Error load_cascade_file (const std::string &path, CascadeModel *out);

} // namespace gpudetect
