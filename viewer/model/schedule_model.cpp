#include "viewer/model/schedule_model.h"

#include "viewer/model/glossary.h"

#include <QColor>
#include <QStringList>

#include "viewer/model/ansi.h"
#include "viewer/model/call_color.h"
#include "viewer/model/session.h"

namespace tsv {

QString format_bytes(double b) {
  if (b >= 1e9) return QString::number(b / 1e9, 'f', 2) + " GB";
  if (b >= 1e6) return QString::number(b / 1e6, 'f', 2) + " MB";
  if (b >= 1e3) return QString::number(b / 1e3, 'f', 1) + " KB";
  return QString::number(b, 'f', 0) + " B";
}

ScheduleModel::ScheduleModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  colors_ = call_colors(*session);
  connect(session, &Session::loaded, this, [this] {
    beginResetModel();
    colors_ = call_colors(*session_);
    endResetModel();
  });
}

int ScheduleModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : session_->calls().size();
}
int ScheduleModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant ScheduleModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= session_->calls().size()) return {};
  const auto& c = session_->calls()[index.row()];
  if (role == kColoredNameRole) return c.colored_name;
  if (role == kProgramKeyRole) return c.program_key;
  if (role == Qt::ForegroundRole && index.column() == kName) {
    QColor col = main_ansi_color(c.colored_name);
    return col.isValid() ? QVariant(col) : QVariant();
  }
  if (role == Qt::DecorationRole && index.column() == kName) return colors_.value(index.row());  // the call's one colour
  if (role == Qt::ToolTipRole && index.column() == kName) {
    const QString g = c.kind == "kernel" ? glossary_text(c.name) : QString();
    return g.isEmpty() ? c.program_key : c.program_key + QStringLiteral("\n") + g;
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kIndex: return c.counter;
    case kKind: return c.kind;
    case kName: return strip_ansi(c.colored_name).trimmed();
    case kBuffers: {
      QStringList parts;
      for (const auto& [n, d] : c.arg_sizes) parts << QStringLiteral("%1×%2").arg(n).arg(d);
      return parts.join(", ");
    }
    case kGlobal: {
      QStringList parts;
      for (qint64 g : c.global_size) parts << QString::number(g);
      return parts.join("×");
    }
    case kSchedule: return c.schedule_index;
  }
  return {};
}

QVariant ScheduleModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"#", "Kind", "Name", "Buffers", "Global", "Sched"};
  return section >= 0 && section < kColumns ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace tsv
