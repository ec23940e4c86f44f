#pragma once
#include <QColor>
#include <QList>
#include <QAbstractTableModel>

namespace tsv {
class Session;

// One row per executed call (kernel or copy): #, kind, name, buffers, global size, schedule.
// The name's display text has no ANSI escapes; kColoredNameRole gives the colored original for the delegate.
class ScheduleModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kIndex, kKind, kName, kBuffers, kGlobal, kSchedule, kColumns };
  enum Role { kColoredNameRole = Qt::UserRole + 1, kProgramKeyRole };
  explicit ScheduleModel(Session* session, QObject* parent = nullptr);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  Session* session_;
  QList<QColor> colors_;  // each call's one colour (viewer/model/call_color.h): the name's swatch
};

QString format_bytes(double bytes);

}  // namespace tsv
