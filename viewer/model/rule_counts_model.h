#pragma once
#include <QAbstractTableModel>
#include <QHash>
#include <QList>

#include "viewer/model/session.h"

namespace tsv {

// Every rule that fired in the run, with its hits: over the whole run (every context's recorded matches) and in one
// context (set_context). A rule is its name at its location (two rules may share a name). One row per rule, in the
// order they first fired; sort it with a QSortFilterProxyModel (kSortRole: the counts as numbers).
class RuleCountsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kRule, kLocation, kRun, kContext, kColumns };
  enum Role { kSortRole = Qt::UserRole + 1, kKeyRole };  // kKeyRole: key() of the row's rule
  struct Row {
    QString name, loc;
    int run = 0;
    int context = 0;
  };
  explicit RuleCountsModel(Session* session, QObject* parent = nullptr);

  // a rule's identity in this model and the stepper's filter: its location, a newline, its name
  static QString key(const QString& name, const QString& loc) { return loc + '\n' + name; }
  void set_context(int context);
  int context() const { return context_; }
  const Row& row(int r) const { return rows_[r]; }
  int row_of(const QString& key) const { return by_key_.value(key, -1); }
  // hits counted by the passes but not listed (a trace recorded with --trace passes): they have no rule
  qint64 unlisted() const { return unlisted_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  void rebuild();
  Session* session_;
  int context_ = -1;
  QList<Row> rows_;
  QHash<QString, int> by_key_;
  qint64 unlisted_ = 0;
};

}  // namespace tsv
