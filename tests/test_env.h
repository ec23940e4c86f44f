#pragma once
// Where a test finds the tinyscope executable and the source tree: ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR;
// outside ctest the paths compiled into the test (TS_BIN, TS_SOURCE_DIR) are the defaults.
#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QtGlobal>

namespace ts_test {
inline QString env_or(const char* name, const QString& fallback) {
  QByteArray v = qgetenv(name);
  return v.isEmpty() ? fallback : QString::fromLocal8Bit(v);
}
inline QString source_dir() { return env_or("TINYSCOPE_SOURCE_DIR", QStringLiteral(TS_SOURCE_DIR)); }
inline QString tinyscope_bin() { return env_or("TINYSCOPE_BIN", QStringLiteral(TS_BIN)); }
// A child that runs on VULKAN: lavapipe (unless the caller's environment picks a driver), the validation layer on
// (the child fails on any message), a private runtime dir.
inline void vulkan_test_env(QProcessEnvironment& env, const QString& runtime_dir) {
  if (!env.contains("VK_DRIVER_FILES") && !env.contains("VK_ICD_FILENAMES"))
    env.insert("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
  env.insert("TINYSCOPE_VK_VALIDATION", "1");
  env.insert("XDG_RUNTIME_DIR", runtime_dir);
}
}  // namespace ts_test
