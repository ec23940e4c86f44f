#pragma once
#include <QStyledItemDelegate>

namespace tsv {

// Paints a cell's text in the colors of its ANSI-escaped original (given by the model under `role`).
class AnsiDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  AnsiDelegate(int role, QObject* parent = nullptr) : QStyledItemDelegate(parent), role_(role) {}
  void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  int role_;
};

}  // namespace tsv
