#pragma once
#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

namespace tsgui {

// The trace stream a `tinyscope serve` child writes as it records (engine/trace/trace.h, stream_to: one JSON line
// per uops batch, finished context and call). poll() reads only the bytes appended since the last poll and counts
// what arrived (a call line is a few hundred bytes and is parsed; the big lines are only counted), so it can run on
// the UI thread a few times a second. rebuild() makes a trace document of a stream after its writer died.
class TraceStream {
 public:
  void reset(const QString& path);
  // reads what was appended since the last poll (nothing when the file is not there yet); true when a line came
  bool poll();
  QString path() const { return path_; }
  int calls() const { return calls_; }
  int contexts() const { return contexts_; }
  double call_seconds() const { return seconds_; }  // the calls' times so far (each one's first run)
  QString last_call() const { return last_call_; }   // the name of the latest call
  qint64 bytes() const { return offset_; }
  // the latest BEAM search report ({"beam": ...} lines: kernel, round, done, total, best_s, elapsed_s, finished, ...);
  // empty before the first
  const QJsonObject& beam() const { return beam_; }

  // A trace JSON document (engine/trace/schema.h) of every complete line of the stream at `path`, with `fields` as
  // extra top-level fields (script, device, partial). The lines are spliced, not parsed: a cut-off last line (the
  // writer died inside it) is left out. *records: the complete lines used. Empty with *error when unreadable.
  static QByteArray rebuild(const QString& path, const QJsonObject& fields, int* records = nullptr, QString* error = nullptr);

 private:
  void take_line(QByteArrayView line);
  QString path_;
  qint64 offset_ = 0;
  QByteArray tail_;  // an incomplete last line, completed by a later poll
  int calls_ = 0, contexts_ = 0;
  double seconds_ = 0;
  QString last_call_;
  QJsonObject beam_;
};

}  // namespace tsgui
