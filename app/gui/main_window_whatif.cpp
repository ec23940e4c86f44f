// Run > What if: one cause at a time. Each toggle (NOOPT, FP contraction, tensor cores, the CPU's schemes, BEAM, any
// codegen variable, the device, one opt of the selected kernel) keeps the run on screen, runs the script again with
// the change, and shows the new run beside the one before in the Compare dock (calls paired, kernel names and counts,
// sources diffed, timings, values). Every run of the sequence is kept: the What-if history compares the run on screen
// with any earlier step.
#include <QComboBox>
#include <QDir>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QStatusBar>
#include <QMenu>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QToolBar>

#include "app/gui/devices.h"
#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "engine/codegen/opt.h"
#include "engine/device/search.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"

namespace tsgui {

namespace {
// the toggles the menu offers: a label, and the codegen variables it sets
struct WhatIf {
  const char* label;
  QList<QPair<QString, QString>> vars;
};
const QList<WhatIf>& whatif_toggles() {
  static const QList<WhatIf> t = {
      {"NOOPT: no opts (the kernels as the scheduler made them)", {{"NOOPT", "1"}}},
      {"No fused multiply-add (FP_CONTRACT=0)", {{"FP_CONTRACT", "0"}}},
      {"No tensor cores (USE_TC=0)", {{"USE_TC", "0"}}},
      {"No CPU schemes (PACK, PREFETCH, TRANSPOSE, VECACC, JAM = 0)",
       {{"PACK", "0"}, {"PREFETCH", "0"}, {"TRANSPOSE", "0"}, {"VECACC", "0"}, {"JAM", "0"}, {"JAM2", "0"}}},
  };
  return t;
}
// "UPCAST 0 4"
QString opt_words(const ts::Opt& o) {
  return QStringLiteral("%1 %2 %3").arg(QString::fromStdString(std::string(ts::opt_op_name(o.op)))).arg(o.axis).arg(o.arg);
}
}  // namespace

QString MainWindow::whatif_label() const {
  QStringList parts;
  const auto& env = controller_->codegen_env();
  for (auto it = env.begin(); it != env.end(); ++it) {
    if (it.key() != QLatin1String("KERNEL_OPTS")) {
      parts << it.key() + "=" + it.value();
      continue;
    }
    // each kernel's opts set by hand: "opts of 3f2a9c: UPCAST 0 4, LOCAL 1 2"
    try {
      for (const auto& [key, opts] : ts::parse_kernel_opts(it.value().toStdString())) {
        QStringList words;
        for (const ts::Opt& o : opts) words << opt_words(o);
        parts << tr("opts of %1: %2").arg(QString::fromStdString(key).left(6), words.isEmpty() ? tr("none") : words.join(QStringLiteral(", ")));
      }
    } catch (const std::exception&) {
      parts << it.key() + "=" + it.value();
    }
  }
  if (controller_->beam() > 0) parts << QStringLiteral("BEAM=%1").arg(controller_->beam());
  return parts.isEmpty() ? tr("default") : parts.join(QStringLiteral(", "));
}

void MainWindow::build_whatif_menu(QMenu* run_menu) {
  auto* menu = run_menu->addMenu(tr("What if"));
  menu->setObjectName(QStringLiteral("whatif_menu"));
  menu->setToolTipsVisible(true);
  for (const WhatIf& w : whatif_toggles()) {
    QAction* a = menu->addAction(tr(w.label));
    a->setCheckable(true);
    a->setToolTip(tr("Runs the script again with this changed and compares the new run with the one before"));
    const auto vars = w.vars;
    connect(a, &QAction::triggered, this, [this, vars](bool on) {
      QMap<QString, QString> env = controller_->codegen_env();
      for (const auto& [k, v] : vars) on ? void(env[k] = v) : void(env.remove(k));
      set_whatif(env, controller_->beam());
    });
    whatif_actions_ << a;
  }
  QAction* beam = menu->addAction(tr("BEAM=2 (search each kernel's opts)"));
  beam->setCheckable(true);
  connect(beam, &QAction::triggered, this, [this](bool on) { set_whatif(controller_->codegen_env(), on ? 2 : 0); });
  whatif_actions_ << beam;
  menu->addAction(tr("Set a codegen variable…"), this, [this] {
    bool ok = false;
    const QString text = QInputDialog::getText(this, tr("What if"), tr("NAME=VALUE (empty VALUE: unset), NAME one of %1")
                                               .arg(QStringList([] { QStringList n; for (const auto& s : ts::codegen_option_names()) n << QString::fromStdString(s); return n; }()).join(", ")),
                                               QLineEdit::Normal, {}, &ok);
    if (!ok || text.trimmed().isEmpty()) return;
    QString err;
    if (!set_whatif_variable(text, &err)) status_->setText(tr("What if: %1").arg(err));
  });
  // the device: the same script and variables on another device, beside the run before
  auto* dev_menu = menu->addMenu(tr("Device"));
  dev_menu->setObjectName(QStringLiteral("whatif_device_menu"));
  connect(dev_menu, &QMenu::aboutToShow, this, [this, dev_menu] {
    dev_menu->clear();
    for (const QString& d : device_names()) {
      QAction* a = dev_menu->addAction(d);
      a->setCheckable(true);
      a->setChecked(d == device_combo_->currentText());
      connect(a, &QAction::triggered, this, [this, d] { set_whatif(controller_->codegen_env(), controller_->beam(), d); });
    }
  });
  // the selected kernel's opts, one at a time: without one of them, none, or a list written by hand (KERNEL_OPTS)
  auto* opts_menu = menu->addMenu(tr("Opts of the selected kernel"));
  opts_menu->setObjectName(QStringLiteral("whatif_opts_menu"));
  opts_menu->setToolTipsVisible(true);
  connect(opts_menu, &QMenu::aboutToShow, this, [this, opts_menu] { fill_whatif_opts_menu(opts_menu); });
  menu->addSeparator();
  menu->addAction(tr("Back to the defaults"), this, [this] { set_whatif({}, 0); });
  // the history: every run of the sequence, the run on screen compared with the one chosen
  whatif_history_box_ = new QComboBox(this);
  whatif_history_box_->setObjectName(QStringLiteral("whatif_history"));
  whatif_history_box_->setToolTip(tr("What-if history: compare the run on screen with an earlier step"));
  whatif_history_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  whatif_history_box_->hide();
  connect(whatif_history_box_, &QComboBox::activated, this, [this](int i) {
    if (i < 0 || i >= whatif_history_.size()) return;
    whatif_compare_labels_ = {whatif_full_label(), whatif_history_[i].first};
    compare_with_trace(whatif_history_[i].second);
  });
}

bool MainWindow::selected_kernel_opts(QString* key, QString* name, std::vector<ts::Opt>* opts) const {
  const int c = selection_->current().context;
  if (c < 0 || c >= session_->contexts().size() || !session_->contexts()[c].has_program) return false;
  const tsv::Program& p = session_->contexts()[c].program;
  if (p.program_key.isEmpty()) return false;
  opts->clear();
  for (const QString& a : p.applied_opts) {
    std::optional<ts::Opt> o = ts::opt_from_str(a.toStdString());
    if (!o) return false;  // (an opt this build cannot write back)
    opts->push_back(*o);
  }
  *key = p.program_key;
  *name = p.name;
  return true;
}

bool MainWindow::set_whatif_kernel_opts(const QString& key, const std::optional<std::vector<ts::Opt>>& opts) {
  QMap<QString, QString> env = controller_->codegen_env();
  std::map<std::string, std::vector<ts::Opt>> all;
  try {
    all = ts::parse_kernel_opts(env.value(QStringLiteral("KERNEL_OPTS")).toStdString());
  } catch (const std::exception&) {
  }
  opts ? void(all[key.toStdString()] = *opts) : void(all.erase(key.toStdString()));
  const QString text = QString::fromStdString(ts::format_kernel_opts(all));
  text.isEmpty() ? void(env.remove(QStringLiteral("KERNEL_OPTS"))) : void(env[QStringLiteral("KERNEL_OPTS")] = text);
  return set_whatif(env, controller_->beam());
}

void MainWindow::fill_whatif_opts_menu(QMenu* m) {
  m->clear();
  QString key, name;
  std::vector<ts::Opt> opts;
  if (!selected_kernel_opts(&key, &name, &opts)) {
    m->addAction(tr("(select a kernel first)"))->setEnabled(false);
    return;
  }
  QStringList words;
  for (const ts::Opt& o : opts) words << opt_words(o);
  m->addAction(tr("%1: %2").arg(name, words.isEmpty() ? tr("no opts") : words.join(QStringLiteral(", "))))->setEnabled(false);
  for (size_t i = 0; i < opts.size(); ++i) {
    QAction* a = m->addAction(tr("Without %1").arg(opt_words(opts[i])));
    a->setToolTip(tr("Runs the script again with this kernel's other opts (a later opt may no longer apply: the run says so)"));
    connect(a, &QAction::triggered, this, [this, key, opts, i] {
      std::vector<ts::Opt> fewer = opts;
      fewer.erase(fewer.begin() + static_cast<long>(i));
      set_whatif_kernel_opts(key, fewer);
    });
  }
  if (!opts.empty()) m->addAction(tr("No opts for this kernel"), this, [this, key] { set_whatif_kernel_opts(key, std::vector<ts::Opt>{}); });
  m->addAction(tr("Edit its opts…"), this, [this, key, name, words] {
    bool ok = false;
    const QString text = QInputDialog::getMultiLineText(this, tr("What if: the opts of %1").arg(name),
                                                        tr("One opt a line, applied in order: OP AXIS ARG (UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, THREAD, "
                                                           "TC, PADTO, SWAP, NOLOCALS), e.g. UPCAST 0 4"),
                                                        words.join(QLatin1Char('\n')), &ok);
    if (!ok) return;
    try {
      set_whatif_kernel_opts(key, ts::parse_opts(text.toStdString()));
    } catch (const std::exception& e) {
      status_->setText(tr("What if: %1").arg(QString::fromStdString(e.what())));
    }
  });
  if (controller_->codegen_env().value(QStringLiteral("KERNEL_OPTS")).contains(key))
    m->addAction(tr("Back to its own opts"), this, [this, key] { set_whatif_kernel_opts(key, std::nullopt); });
}

bool MainWindow::set_whatif_variable(const QString& assignment, QString* error) {
  const QString name = assignment.section(QLatin1Char('='), 0, 0).trimmed(), value = assignment.section(QLatin1Char('='), 1).trimmed();
  if (name == QLatin1String("DEV")) {
    const QString dev = require_device(value, error);
    if (dev.isEmpty()) return false;
    if (set_whatif(controller_->codegen_env(), controller_->beam(), dev)) return true;
    if (error) *error = tr("a run is in progress (stop it first)");
    return false;
  }
  // (the serve request checks the same)
  if (const std::string why = ts::codegen_option_problem(name.toStdString(), value.toStdString()); !why.empty()) {
    if (error) *error = QString::fromStdString(why);
    return false;
  }
  QMap<QString, QString> env = controller_->codegen_env();
  value.isEmpty() ? void(env.remove(name)) : void(env[name] = value);
  if (set_whatif(env, controller_->beam())) return true;
  if (error) *error = tr("a run is in progress (stop it first)");
  return false;
}

QString MainWindow::whatif_full_label() const { return first_device() + QStringLiteral(" · ") + whatif_label(); }

bool MainWindow::set_whatif(const QMap<QString, QString>& env, int beam, const QString& device) {
  if (controller_->running() || compare_controller_->running()) {
    status_->setText(tr("What if: a run is in progress (stop it first)"));
    return false;
  }
  // the run on screen is the step before: kept as a trace file of the sequence (named by its session's device, so
  // before the device changes as after)
  QString before;
  const QString before_label = whatif_full_label();
  if (QString err; !device.isEmpty() && !set_device(device, &err)) {
    status_->setText(tr("What if: %1").arg(err));
    return false;
  }
  if (!session_->raw().isEmpty() && opened_trace_.isEmpty()) {
    if (!whatif_dir_) whatif_dir_ = std::make_unique<QTemporaryDir>();
    before = whatif_dir_->filePath(QStringLiteral("%1.json").arg(whatif_history_.size() + 1));
    QString err;
    if (!session_->save(before, &err)) {
      status_->setText(tr("What if: cannot keep the run before: %1").arg(err));
      before.clear();
    } else {
      whatif_history_.push_back({before_label, before});
      whatif_history_box_->addItem(QStringLiteral("%1. %2").arg(whatif_history_.size()).arg(before_label));
      whatif_history_box_->show();
    }
  }
  controller_->set_codegen_env(env);
  controller_->set_beam(beam);
  {
    const QSignalBlocker block(beam_spin_);  // (the toolbar's BEAM shows it)
    beam_spin_->setValue(beam);
  }
  // the menu's checks follow the variables set
  for (int i = 0; i < whatif_toggles().size() && i < whatif_actions_.size(); ++i) {
    bool all = true;
    for (const auto& [k, v] : whatif_toggles()[i].vars) all = all && env.value(k) == v;
    whatif_actions_[i]->setChecked(all);
  }
  if (whatif_actions_.size() > whatif_toggles().size()) whatif_actions_.back()->setChecked(beam == 2);
  whatif_before_ = before;
  whatif_compare_labels_ = before.isEmpty() ? QPair<QString, QString>{} : QPair<QString, QString>{{}, before_label};
  append_console(tr("\n[What if: %1]\n").arg(whatif_full_label()), false);
  run();
  return true;
}

// after a what-if run: the new run beside the one before
void MainWindow::whatif_compare() {
  if (whatif_before_.isEmpty()) return;
  const QString before = whatif_before_;
  whatif_before_.clear();
  if (!run_ok_) return;
  const QString now = whatif_full_label(), then = whatif_compare_labels_.second;
  whatif_compare_labels_ = {now, then};
  if (compare_with_trace(before))
    status_->setText(tr("What if: %1 (%2 calls) beside the run before, %3 (%4 calls)")
                         .arg(now).arg(session_->calls().size()).arg(then).arg(compare_session_->calls().size()));
}

}  // namespace tsgui
