#pragma once
#include <QTableView>

#include "viewer/model/selection_model.h"

namespace tsv {
class ScheduleModel;

// The table of executed calls; selecting a row selects its kernel, and a selected kernel marks its rows.
class SchedulePane : public QTableView {
  Q_OBJECT
 public:
  SchedulePane(SelectionModel* selection, QWidget* parent = nullptr);
  ScheduleModel* schedule_model() const { return model_; }

 private:
  void sync_rows();
  bool sync_queued_ = false;
  SelectionModel* selection_;
  ScheduleModel* model_;
  bool syncing_ = false;
};

}  // namespace tsv
