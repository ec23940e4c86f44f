#pragma once
#include <QByteArray>
#include <QString>

namespace tsv {

// A saved comparison: two traces in one file (two devices' runs of one script, two machines, or a script before and
// after an edit), reopened as it was saved:
//   {"tinyscope_compare": 1, "first_label": "CPU", "second_label": "INTERP", "first": TRACE, "second": TRACE}
// Each trace is checked as a trace file is (check_trace) when a Session loads it.
struct CompareFile {
  QByteArray first, second;  // the two traces' JSON
  QString first_label, second_label;
};
constexpr int kCompareFileVersion = 1;

// true when `data` (a file's first bytes are enough) is a saved comparison rather than a trace: its root object's
// first key is "tinyscope_compare"
bool is_compare_file(const QByteArray& data);
// the same for the file at `path` (its first bytes; false when it cannot be read)
bool is_compare_file_at(const QString& path);
QByteArray write_compare_file(const CompareFile& c);
// reads and splits a saved comparison; false with *error naming the problem (not JSON, a missing side, a version this
// build does not read, over twice the trace size limit)
bool read_compare_file(const QString& path, CompareFile* out, QString* error);
bool parse_compare_file(const QByteArray& data, CompareFile* out, QString* error);

}  // namespace tsv
