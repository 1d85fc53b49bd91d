#pragma once
// A check of JSON text for what Kubernetes' strict decoding refuses and Boost.JSON (our
// decoder of documents we edit) takes silently: a key repeated within one object (Boost.JSON
// keeps one of them, and the API server's strict field validation reports "duplicate field")
// and a number outside float64 (Boost.JSON reads 1e999 as infinity, which Go's decoder refuses:
// "cannot unmarshal number 1e999 into Go value of type float64"). Run it on the text before
// parsing it with Boost.JSON wherever both must hold (the admission webhook) or wherever the
// text's duplicate keys would otherwise be lost (the what-if API's request envelope).

#include <cstddef>
#include <string_view>

#include "model/result.h"

namespace hamisim::model {

struct StrictJsonOptions {
  bool unique_keys = true;     // a key twice in one object is an error
  bool finite_numbers = true;  // a number that overflows float64 is an error
  size_t max_depth = 128;      // nesting beyond is an error (every walk stays shallow)
};

// Ok, or an error naming the first offence and where it is, as a path from the root
// ("duplicate key \"uid\" at request", "number 1e999 is out of range at request.object.spec");
// text that is not JSON at all is an error too ("invalid JSON: <why> at offset N").
Status check_strict_json(std::string_view text, const StrictJsonOptions& options = {});

}  // namespace hamisim::model
