#include "viewer/panes/ansi_delegate.h"

#include <QApplication>
#include <QPainter>

#include "viewer/model/ansi.h"

namespace tsv {

void AnsiDelegate::paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QString colored = index.data(role_).toString();
  if (colored.isEmpty()) return QStyledItemDelegate::paint(p, option, index);
  QStyleOptionViewItem opt = option;
  initStyleOption(&opt, index);
  opt.text.clear();
  const QWidget* w = option.widget;
  QStyle* style = w ? w->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &opt, p, w);
  QRect r = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, w).adjusted(3, 0, -3, 0);
  bool selected = option.state & QStyle::State_Selected;
  QColor base = option.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
  p->save();
  p->setFont(opt.font);
  int x = r.left();
  QFontMetrics fm(opt.font);
  for (const auto& seg : parse_ansi(colored)) {
    if (x > r.right()) break;
    QString text = seg.text;
    p->setPen(seg.color.isValid() && !selected ? seg.color : base);
    int width = fm.horizontalAdvance(text);
    p->drawText(QRect(x, r.top(), r.right() - x, r.height()), Qt::AlignVCenter | Qt::AlignLeft, text);
    x += width;
  }
  p->restore();
}

}  // namespace tsv
