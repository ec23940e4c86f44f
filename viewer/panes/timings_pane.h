#pragma once
#include <QScrollArea>

#include "viewer/model/selection_model.h"

namespace tsv {
class TimingsModel;

// One painted bar per call (length = time), labelled with time, GFLOP/s and GB/s; the selected kernel's bars
// are highlighted and clicking a bar selects its call.
class TimingsPane : public QScrollArea {
  Q_OBJECT
 public:
  TimingsPane(SelectionModel* selection, QWidget* parent = nullptr);
  TimingsModel* timings_model() const { return model_; }

 private:
  SelectionModel* selection_;
  TimingsModel* model_;
};

}  // namespace tsv
