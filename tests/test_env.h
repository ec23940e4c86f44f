#pragma once
// Where a test finds the tinyscope executable and the source tree: ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR;
// outside ctest the paths compiled into the test (TS_BIN, TS_SOURCE_DIR) are the defaults.
#include <QByteArray>
#include <QString>
#include <QtGlobal>

namespace ts_test {
inline QString env_or(const char* name, const QString& fallback) {
  QByteArray v = qgetenv(name);
  return v.isEmpty() ? fallback : QString::fromLocal8Bit(v);
}
inline QString source_dir() { return env_or("TINYSCOPE_SOURCE_DIR", QStringLiteral(TS_SOURCE_DIR)); }
inline QString tinyscope_bin() { return env_or("TINYSCOPE_BIN", QStringLiteral(TS_BIN)); }
}  // namespace ts_test
