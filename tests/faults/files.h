#pragma once
// The fault tests' file helpers: a file's bytes, a file written whole (a failure fails the calling test), and a cache
// folder's entries (the files named *.EXT) by name.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QMap>
#include <QtTest/QtTest>

namespace ts_test {
inline QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
inline void write_all(const QString& path, const QByteArray& data) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(f.write(data), data.size());
}
inline QMap<QString, QByteArray> entries(const QString& dir, const QString& ext) {
  QMap<QString, QByteArray> out;
  for (const QFileInfo& f : QDir(dir).entryInfoList({"*." + ext}, QDir::Files)) out[f.fileName()] = read_all(f.filePath());
  return out;
}
}  // namespace ts_test
