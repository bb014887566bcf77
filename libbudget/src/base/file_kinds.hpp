#pragma once
// Private: the project's own JSON file kinds, each named by its "schema" key, and the option that
// takes each. A reader handed a file of another kind says which kind it is and where it goes,
// before any key check lists keys the file was never meant to have (issue 44 §5).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace budget::detail {

/// When `root` is an object whose "schema" is one of this project's file kinds other than
/// `expected_schema` ("budget.cluster", "budget.calibration", "budget.collectives"): budget::Error
/// naming `source` and /schema, saying what the file is and which option takes it ("this is a
/// cluster file (docs/cluster.md): pass it with --cluster"); `expected_what` names what the reader
/// wanted ("a calibration profile"). Nothing otherwise (the reader's own checks follow).
void refuse_other_file_kind(const nlohmann::json& root, std::string_view expected_schema, std::string_view expected_what,
                            const std::string& source);

}  // namespace budget::detail
