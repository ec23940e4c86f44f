#include "viewer/panes/contexts_pane.h"

#include <QHeaderView>

#include "viewer/model/contexts_model.h"
#include "viewer/model/session.h"
#include "viewer/panes/ansi_delegate.h"

namespace tsv {

ContextsPane::ContextsPane(SelectionModel* selection, QWidget* parent) : QTreeView(parent), selection_(selection) {
  model_ptr_ = new ContextsModel(selection->session(), this);
  setModel(model_ptr_);
  setItemDelegateForColumn(0, new AnsiDelegate(ContextsModel::kColoredNameRole, this));
  setUniformRowHeights(true);
  header()->setStretchLastSection(false);
  header()->setSectionResizeMode(0, QHeaderView::Stretch);
  header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  connect(model_ptr_, &QAbstractItemModel::modelReset, this, [this] {
    // expand the schedules so their kernels show; passes stay folded
    for (int r = 0; r < model_ptr_->rowCount(); ++r) expand(model_ptr_->index(r, 0));
  });
  connect(selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (syncing_ || !cur.isValid()) return;
    syncing_ = true;
    selection_->select_pass(cur.data(ContextsModel::kContextRole).toInt(), cur.data(ContextsModel::kPassRole).toInt());
    syncing_ = false;
  });
  connect(selection_, &SelectionModel::changed, this, [this](const Selection& s) {
    if (syncing_) return;
    QModelIndex cur = currentIndex();
    if (cur.isValid() && cur.data(ContextsModel::kContextRole).toInt() == s.context &&
        cur.data(ContextsModel::kPassRole).toInt() == s.pass)
      return;
    QModelIndex idx = model_ptr_->index_of_context(s.context);
    if (idx.isValid() && s.pass >= 0) idx = model_ptr_->index(s.pass, 0, idx);
    syncing_ = true;
    if (idx.isValid()) {
      setCurrentIndex(idx);
      scrollTo(idx);
    } else {
      clearSelection();
    }
    syncing_ = false;
  });
}

}  // namespace tsv
