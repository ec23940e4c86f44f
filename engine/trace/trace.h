#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace ts::trace {

constexpr int kSchemaVersion = 1;
enum class Level { Off = 0, Passes = 1, Matches = 2 };

void set_level(Level l);
Level level();
// The whole trace of this process so far: {"version", "contexts": [...], "calls": [...], ...}
nlohmann::json to_json();
// extra top-level fields (the script, its result, the device)
void set_field(const std::string& key, const nlohmann::json& value);
void save(const std::string& path);  // throws ts::Error on I/O failure
// reads a saved trace; throws ts::Error naming the problem (missing file, bad JSON, other schema version)
nlohmann::json load(const std::string& path);

}  // namespace ts::trace
