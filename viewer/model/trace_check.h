#pragma once
#include <QByteArray>
#include <QString>
#include <QtGlobal>

class QJsonDocument;

namespace tsv {

// What the viewer accepts of a trace file (schema: engine/trace/recorder.cpp). A trace is untrusted input: a file
// over these limits is refused with an error naming the limit, before anything is built from it.
struct TraceLimits {
  qint64 max_bytes = qint64(512) << 20;  // TINYSCOPE_MAX_TRACE_MB overrides it (default_limits())
  int max_nesting = 64;                  // arrays and objects inside each other (the schema needs 7; a result more)
  qint64 max_values = 48'000'000;        // JSON values in all: a parsed value costs 16-24 bytes, so a file of
                                         // nothing but "0," would take 8 times its size; recorded traces hold one
                                         // value per 12 bytes or so (a 512 MB one: some 44 million)
  int max_uops = 5'000'000;
  int max_uop_id = (1 << 30) - 1;        // the rewrite stepper numbers its replayed nodes above the trace's
  int max_pass_depth = 255;              // a pass's nesting under other passes
  int max_name_chars = 4096;             // names, ops, dtypes, rules, locations, keys, devices, paths
  int max_arg_chars = 1 << 20;           // a uop's argument
  // kernel sources and the script's error text have no limit of their own: the Source pane shows a capped part
};
TraceLimits default_limits();
// "" when a trace of this size is within the limit, else the error (checked before a file is read)
QString trace_size_error(qint64 bytes, const TraceLimits& limits = default_limits());

// The one check of a trace before any model sees it. In order, each step only on what the last one let through:
//  1. size and a scan of the raw bytes (no recursion): nesting depth, the number of values, and that "version" is
//     written as an integer;
//  2. parsing (QJsonDocument);
//  3. the schema: every key the recorder writes, its type and range (missing keys and wrong types are errors);
//  4. references: every uop id a pass, match, schedule item, program or source names exists;
//  5. the uop graph is acyclic (an iterative walk: a uop that lists itself, or a longer cycle, is an error).
// On success *doc holds the parsed document. On failure *error says what is wrong and where, e.g.
// `contexts[3].passes[0].before: uop 99 is not in the trace` (no file name: the caller adds it).
bool check_trace(const QByteArray& data, QJsonDocument* doc, QString* error,
                 const TraceLimits& limits = default_limits());

}  // namespace tsv
