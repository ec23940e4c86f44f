// The window's size and its docks' layout: the first launch's default layout (applied once the window is shown, the
// same path with or without --screenshot), View > Reset layout, the saved layout restored within the screen, docks
// shown without the window outgrowing the screen, and View > Larger text (fonts scaled, the window's size kept).
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLayout>
#include <QDockWidget>
#include <QScreen>
#include <QSettings>
#include <QShowEvent>
#include <QTimer>
#include <algorithm>

#include "app/gui/main_window.h"
#include "viewer/panes/graph_pane.h"

namespace tsgui {

QRect MainWindow::screen_area() const {
  // a bare offscreen platform's screen is a made-up 800 x 600: nothing to fit (a configured one, configfile=, is real)
  if (QGuiApplication::platformName() == QLatin1String("offscreen") &&
      !qEnvironmentVariable("QT_QPA_PLATFORM").contains(QLatin1String("configfile")))
    return {};
  const QScreen* sc = screen() ? screen() : QGuiApplication::primaryScreen();
  return sc ? sc->availableGeometry() : QRect();
}

QSize MainWindow::default_size() const {
  QSize size(1600, 1000);
  const QRect area = screen_area();
  if (!area.isEmpty()) size = size.boundedTo(area.size() - (frameGeometry().size() - geometry().size()));
  return size;
}

void MainWindow::fit_to_screen() {
  const QRect area = screen_area();
  if (area.isEmpty()) return;
  const QSize frame = frameGeometry().size() - geometry().size();
  const QSize most = area.size() - frame;
  if (width() > most.width() || height() > most.height()) resize(size().boundedTo(most));
  if (isVisible() && !area.contains(frameGeometry())) {  // moved back in where it sticks out
    QRect f = frameGeometry();
    f.moveLeft(std::clamp(f.left(), area.left(), std::max(area.left(), area.right() - f.width() + 1)));
    f.moveTop(std::clamp(f.top(), area.top(), std::max(area.top(), area.bottom() - f.height() + 1)));
    move(f.topLeft());
  }
}

// the window's size, and with restore_layout the saved layout, devices, theme and text size
void MainWindow::restore_settings() {
  setMinimumSize(kWindowMin);  // an explicit minimum: the docks' minimums never grow the window past the screen
  QSettings settings;
  if (!restore_layout_ || !restoreGeometry(settings.value("window/geometry").toByteArray())) resize(default_size());
  fit_to_screen();
  if (restore_layout_) {
    state_restored_ = restoreState(settings.value("window/state").toByteArray());
    // a saved device this build does not have (any more) is said so, never swapped silently
    const QString saved = settings.value("run/device").toString();
    QString err;
    if (!saved.isEmpty() && !set_device(saved, &err)) {
      device_combo_->setCurrentIndex(0);
      report_device_error(tr("The saved device is unknown (%1): using %2.").arg(err, device_combo_->currentText()),
                          tr("saved device %1 unknown: using %2").arg(saved, device_combo_->currentText()));
    }
    const QString saved_compare = settings.value("run/compare").toString();
    if (!set_compare_device(saved_compare, &err)) {
      set_compare_device({});
      report_device_error(tr("The saved compare device is unknown (%1): no comparison.").arg(err),
                          tr("saved compare device %1 unknown").arg(saved_compare));
    }
  }
  bool dark = restore_layout_ && QSettings().value("view/dark", false).toBool();
  dark_act_->setChecked(dark);
  set_dark(dark);
  if (restore_layout_ && QSettings().value("view/large_text", false).toBool()) large_act_->setChecked(true);
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!layout_pending_) return;
  // docks have their sizes once the window is laid out at its size: the default layout follows the first show, for
  // every launch without a saved layout (--screenshot's too: a screenshot shows what users get)
  QTimer::singleShot(0, this, [this] {
    fit_to_screen();
    if (!state_restored_) default_layout();
    if (layout()) layout()->activate();  // the docks at their sizes now, not at the next layout request
    layout_pending_ = false;
    check_settled();
  });
}

void MainWindow::default_layout() {
  if (default_docks_.size() < 7) return;
  const auto& d = default_docks_;  // script, contexts, console, kernel AST, source, schedule, timings[, stepper]
  const int w = width(), h = height();
  // the bottom row a third of the height, the left column a quarter of the width, the right column a third
  const int bottom = std::max(h * 30 / 100, 200), column = std::max(h - bottom - 110, 3 * 150);
  resizeDocks({d[5]}, {bottom}, Qt::Vertical);
  resizeDocks({d[0], d[1], d[2]}, {column * 34 / 100, column * 33 / 100, column * 33 / 100}, Qt::Vertical);
  resizeDocks({d[0], d[3]}, {w * 24 / 100, w * 34 / 100}, Qt::Horizontal);
  // the right column: the kernel AST, the rewrite stepper under it, the source
  if (d.size() > 7) resizeDocks({d[3], d[7], d[4]}, {column * 30 / 100, column * 40 / 100, column * 30 / 100}, Qt::Vertical);
  else resizeDocks({d[3], d[4]}, {column / 2, column / 2}, Qt::Vertical);
  resizeDocks({d[5], d[6]}, {w / 2, w / 2}, Qt::Horizontal);
}

void MainWindow::reset_layout() {
  if (restore_layout_) {
    QSettings settings;
    settings.remove("window/geometry");
    settings.remove("window/state");
  }
  for (QDockWidget* d : findChildren<QDockWidget*>()) d->setFloating(false);
  restoreState(default_state_);
  showNormal();
  resize(default_size());
  fit_to_screen();
  if (compare_loaded_) show_dock(compare_dock_, height() * 22 / 100);
  // the sizes once the new size is laid out
  layout_pending_ = true;
  QTimer::singleShot(0, this, [this] {
    if (layout()) layout()->activate();  // the restored docks at the new size first: resizeDocks shares out what they have
    default_layout();
    if (layout()) layout()->activate();  // the docks at their sizes now, not at the next layout request
    layout_pending_ = false;
    check_settled();
  });
}

void MainWindow::show_dock(QDockWidget* d, int extent, Qt::Orientation o) {
  const bool was_visible = d->isVisible();
  d->show();
  if (!was_visible) resizeDocks({d}, {extent}, o);
  // where the window has no room for it beside the others, it shares a place with the one above it (a tab)
  const QRect area = screen_area();
  if (!area.isEmpty() && !d->isFloating() && tabifiedDockWidgets(d).isEmpty()) {
    const QSize room = area.size() - (frameGeometry().size() - geometry().size());
    const QSize need = layout() ? layout()->totalMinimumSize() : QSize();
    if (need.height() > room.height() || need.width() > room.width() || height() > room.height()) {
      for (QDockWidget* other : default_docks_)
        if (dockWidgetArea(other) == dockWidgetArea(d) && other != d && other->isVisible()) {
          tabifyDockWidget(other, d);
          // the row as tall as the panes beside it let it be: the tab holds what had a row of its own
          const Qt::DockWidgetArea area = dockWidgetArea(d);
          const bool row = area == Qt::BottomDockWidgetArea || area == Qt::TopDockWidgetArea;
          resizeDocks({d}, {row ? std::max(extent, height() / 2) : std::max(extent, width() / 3)}, row ? Qt::Vertical : Qt::Horizontal);
          break;
        }
    }
  }
  d->raise();
  fit_to_screen();
}

void MainWindow::set_large_text(bool on) {
  const QSize kept = size();
  const double k = on ? kLargeText : 1.0;
  // the panes' roots and every widget in them with a font of its own (the editors, the console): each scaled from the
  // font it had before the first change, and given back exactly that (or the inherited font) when off
  QList<QWidget*> targets{centralWidget()};
  for (QDockWidget* d : findChildren<QDockWidget*>())
    if (d->widget()) targets << d->widget();
  for (int i = 0, roots = int(targets.size()); i < roots; ++i)
    for (QWidget* w : targets[i]->findChildren<QWidget*>())
      if (w->testAttribute(Qt::WA_SetFont) || w->property("ts_base_font").isValid()) targets << w;
  for (QWidget* w : targets) {
    if (!w->property("ts_base_font").isValid()) {
      w->setProperty("ts_base_font", w->font());
      w->setProperty("ts_own_font", w->testAttribute(Qt::WA_SetFont));
    }
  }
  for (QWidget* w : targets) {
    const QFont base = w->property("ts_base_font").value<QFont>();
    if (!on) {
      w->setFont(w->property("ts_own_font").toBool() ? base : QFont());
      continue;
    }
    QFont f = base;
    if (f.pointSizeF() > 0) f.setPointSizeF(f.pointSizeF() * k);
    else if (f.pixelSize() > 0) f.setPixelSize(qRound(f.pixelSize() * k));
    w->setFont(f);
  }
  for (auto* g : findChildren<tsv::GraphPane*>()) g->set_text_scale(k);
  if (size() != kept) resize(kept);
  if (large_act_->isChecked() != on) large_act_->setChecked(on);
  if (restore_layout_) QSettings().setValue("view/large_text", on);
}

}  // namespace tsgui
