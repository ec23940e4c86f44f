#include "viewer/panes/schedule_pane.h"

#include <QHeaderView>

#include "viewer/model/schedule_model.h"
#include "viewer/model/session.h"
#include "viewer/panes/ansi_delegate.h"

namespace tsv {

SchedulePane::SchedulePane(SelectionModel* selection, QWidget* parent) : QTableView(parent), selection_(selection) {
  model_ = new ScheduleModel(selection->session(), this);
  setModel(model_);
  setItemDelegateForColumn(ScheduleModel::kName, new AnsiDelegate(ScheduleModel::kColoredNameRole, this));
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::ExtendedSelection);
  verticalHeader()->hide();
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  horizontalHeader()->setStretchLastSection(false);
  setWordWrap(false);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    resizeColumnsToContents();
    horizontalHeader()->setSectionResizeMode(ScheduleModel::kName, QHeaderView::Stretch);
  });
  connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (syncing_ || !cur.isValid()) return;
    selection_->select_call(cur.row());
  });
  // marks every call of the selected kernel, after the view finished handling the click that caused it
  connect(selection_, &SelectionModel::changed, this, [this] {
    if (sync_queued_) return;
    sync_queued_ = true;
    QMetaObject::invokeMethod(this, &SchedulePane::sync_rows, Qt::QueuedConnection);
  });
}

void SchedulePane::sync_rows() {
  sync_queued_ = false;
  const Selection& s = selection_->current();
  {
    syncing_ = true;
    QItemSelection rows;
    for (int r : selection_->session()->calls_of_context(selection_->kernel_context()))
      rows.select(model_->index(r, 0), model_->index(r, ScheduleModel::kColumns - 1));
    if (s.call >= 0 && s.program_key.isEmpty())
      rows.select(model_->index(s.call, 0), model_->index(s.call, ScheduleModel::kColumns - 1));
    if (s.call >= 0) selectionModel()->setCurrentIndex(model_->index(s.call, 0), QItemSelectionModel::NoUpdate);
    selectionModel()->select(rows, QItemSelectionModel::ClearAndSelect);
    if (s.call >= 0) scrollTo(model_->index(s.call, 0));
    syncing_ = false;
  }
}

}  // namespace tsv
