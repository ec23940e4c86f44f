#pragma once
#include <QTreeView>

#include "viewer/model/selection_model.h"

namespace tsv {
class ContextsModel;

// The tree of schedule and kernel contexts with their rewrite passes; follows and drives the selection.
class ContextsPane : public QTreeView {
  Q_OBJECT
 public:
  ContextsPane(SelectionModel* selection, QWidget* parent = nullptr);
  ContextsModel* model_() const { return model_ptr_; }

 private:
  SelectionModel* selection_;
  ContextsModel* model_ptr_;
  bool syncing_ = false;
};

}  // namespace tsv
