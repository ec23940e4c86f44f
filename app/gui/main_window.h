#pragma once
#include <QElapsedTimer>
#include <QHash>
#include <QMainWindow>
#include <QMap>
#include <QString>
#include <QTemporaryDir>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "viewer/panes/code_editor.h"

class QComboBox;
class QMenu;
class QSpinBox;
class QProgressBar;
class QToolButton;
class QJsonObject;
class QDockWidget;
class QPlainTextEdit;
class QAction;
class QLabel;
class QTableView;
class QCheckBox;

namespace ts {
struct Opt;
}

namespace tsv {
class Session;
class SelectionModel;
class ContextsPane;
class SchedulePane;
class SourcePane;
class TimingsPane;
class GraphPane;
class CompareModel;
class OutputCompareModel;
class ValuesPane;
class AccessPanes;
class SourceDiff;
class RooflinePane;
}  // namespace tsv

namespace tsgui {
class RunController;
class Tour;
class StallProbe;
class LimitsMeasure;

// The inspector: a script editor and console, the run toolbar, and dock panes over the last run's trace.
// Every pane follows one SelectionModel. The dock layout and the theme persist in QSettings.
class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const QString& examples_dir, bool restore_layout = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  void open_script(const QString& path);
  // opens a saved trace (nothing runs); on failure the window shows the error (console, status line, title) and
  // *error holds it. A trace over kAsyncTraceBytes opened with no `error` to fill (File > Open) is read off the UI
  // thread, a busy bar in the status bar at once; the console shows what the script printed when the trace kept it. The trace's `script` field, when it names a .py file, is opened in the editor marked as from
  // the trace: Run asks before running it (once).
  bool open_trace(const QString& path, QString* error = nullptr);
  static constexpr qint64 kAsyncTraceBytes = 8 << 20;
  // the error the window shows above the tensor graph when a trace could not be opened ("" when none)
  QString trace_error() const;
  // the editor holds the script a trace named, not one the user opened: Run asks first
  bool script_from_trace() const { return !script_trace_.isEmpty(); }
  // how Run asks whether to run a script a trace named (default: a QMessageBox); returns true to run it
  void set_run_confirmation(std::function<bool(const QString& question)> ask) { confirm_run_ = std::move(ask); }
  // writes the current session's trace JSON (File > Save trace); false with a console message on failure
  bool save_trace(const QString& path);
  // writes the current trace's timeline as Chrome's Trace Event JSON (File > Export timeline); false with the reason in
  // the console and the status line
  bool export_timeline(const QString& path);
  // selects one of the engine's devices (canonicalized: "cpu" is CPU); an unknown one changes nothing and is
  // false with *error naming it and the devices that exist
  bool set_device(const QString& dev, QString* error = nullptr);
  // an error about a device, in the console and the status line, and `label` (or "DEVICE ERROR") in red beside it
  void report_device_error(const QString& text, const QString& label = {});
  void run();
  void stop();
  void set_dark(bool dark);
  // after a run or an opened trace, select the first context whose name contains `text` (else the first kernel)
  void set_initial_context(const QString& text) { initial_context_ = text; }
  // after a run or an opened trace, show the tour at stop n (1-based; 0: no tour)
  void set_initial_tour(int n) { initial_tour_ = n; }
  // File > Compare with a saved trace…: the trace in the panes beside a saved one, call by call, output by output (two
  // machines, or a script before and after an edit); nothing runs. False with *error (and the console) on failure.
  bool compare_with_trace(const QString& path, QString* error = nullptr);
  // File > Save comparison…: both traces of the comparison shown in one file (viewer/model/compare_file.h), reopened
  // by open_trace as it was; false when no comparison is shown or the file cannot be written
  bool save_compare(const QString& path, QString* error = nullptr);
  // what the Compare dock calls the two sides: the devices of a run and its compare run, or the saved traces' names
  QString first_label() const;
  QString second_label() const;
  // Run > Record every call's buffers: each call's output buffer kept in the trace (`tinyscope run --snapshots`)
  void set_snapshots(bool on);
  // BEAM=n over the reference's or the extended opt space for this window's runs (`--beam N [--extended]`; not saved)
  void set_beam(int n, bool extended);
  // runs every script on a second device too ("" or "none": no comparison), shown in the Compare dock
  bool set_compare_device(const QString& dev, QString* error = nullptr);  // as set_device
  QString compare_device() const;
  // the device the trace in the panes ran on (the chooser's while nothing ran yet)
  QString first_device() const;
  // the docks' default sizes for the current window size
  void default_layout();
  // View > Reset layout: the docks where the first launch puts them, the default window size, the saved layout cleared
  void reset_layout();
  // the window's size at first launch: 1600 x 1000, or the screen's available area where that is smaller
  QSize default_size() const;
  // the smallest a pane's content is given (its own minimum never sizes the window), and the window's own minimum
  static constexpr QSize kPaneMin{160, 104};  // (a dock adds its title: 120 px and more)
  static constexpr QSize kWindowMin{640, 420};
  // the screen's area the window must stay within (its available geometry; none on a bare offscreen platform)
  QRect screen_area() const;
  // a dock shown (or moved) keeps the window within the screen: shows it and gives it `extent` px along `o`
  void show_dock(QDockWidget* d, int extent, Qt::Orientation o = Qt::Vertical);
  // true until the first show's default layout is applied (settled() waits for it once the window is shown)
  bool layout_pending() const { return layout_pending_; }

  tsv::Session* session() const { return session_; }
  tsv::SelectionModel* selection() const { return selection_; }
  RunController* controller() const { return controller_; }
  RunController* compare_controller() const { return compare_controller_; }
  tsv::Session* compare_session() const { return compare_session_; }
  tsv::CompareModel* compare_model() const { return compare_model_; }
  tsv::OutputCompareModel* output_compare_model() const { return output_model_; }
  QPlainTextEdit* compare_console() const { return compare_console_; }
  tsv::ValuesPane* values() const { return values_; }
  // the Roofline dock, and Run > Measure limits for this device (`tinyscope bench --limits` in a child)
  tsv::RooflinePane* roofline() const { return roofline_; }
  LimitsMeasure* limits_measure() const { return limits_measure_; }
  void measure_limits();
  // Help > Tour of the pipeline: shows the Tour dock at its first stop
  void start_tour();
  void show_tour(int stop);  // 0-based
  // Help > Lessons: plays a lesson (resources/lessons; `path` a file or ":/lessons/..."): opens its script, runs it, then
  // shows its first step (with --tour N / set_initial_tour: step N) in the Tour dock. False with *error when the lesson
  // or its script cannot be read.
  bool play_lesson(const QString& path, QString* error = nullptr);
  // play_lesson less the run: the lesson loaded, its script opened, its first step shown after the next run
  bool prepare_lesson(const QString& path, QString* error = nullptr);
  // Run > What if (main_window_whatif.cpp): the script run again with these codegen variables and BEAM (on `device`
  // when one is named), the new run compared with the one on screen (kept in the What-if history); false when a run is
  // in progress
  bool set_whatif(const QMap<QString, QString>& env, int beam, const QString& device = {});
  // "NAME=VALUE" (an empty VALUE unsets it) for a codegen variable the engine reads, or DEV=DEVICE; false with *error
  // otherwise
  bool set_whatif_variable(const QString& assignment, QString* error = nullptr);
  // the codegen variables and BEAM of the runs ("default" when none), as the history and the Compare dock name them
  QString whatif_label() const;
  // the device and the label: "CPU · NOOPT=1" (the history's and the Compare dock's names of a step)
  QString whatif_full_label() const;
  // the selected kernel's program key, name and opts (false: no kernel selected); the script run again with this
  // kernel's opts set by hand (nullopt: its own again), the new run beside the one before
  bool selected_kernel_opts(QString* key, QString* name, std::vector<ts::Opt>* opts) const;
  bool set_whatif_kernel_opts(const QString& key, const std::optional<std::vector<ts::Opt>>& opts);
  // the runs of the what-if sequence before the one on screen: {label, trace file}
  const QList<QPair<QString, QString>>& whatif_history() const { return whatif_history_; }
  Tour* tour() const { return tour_; }
  tsv::SourceDiff* compare_diff() const { return compare_diff_; }
  // the Compare dock's line naming the first call whose output buffer differs between the two runs (needs snapshots)
  QLabel* divergence_label() const { return divergence_label_; }
  tsv::SourcePane* source_pane() const { return source_; }
  tsv::CodeEditor* editor() const { return editor_; }
  // a click on a script line's number: selects the first call of the schedule that line asked for (the next one on
  // each further click); false with a status message when the line realized nothing
  bool select_script_line(int line);
  // Help > Keyboard shortcuts and Help > Legend: what each shows (HTML)
  QString shortcuts_text() const;
  QString legend_text() const;
  // View > Larger text: every pane's text (tables, editors, the console, graph labels) kLargeText times as large, the
  // window's size kept; off restores every font exactly (kept in the settings)
  static constexpr double kLargeText = 1.4;
  void set_large_text(bool on);
  QAction* large_text_action() const { return large_act_; }
  QPlainTextEdit* console() const { return console_; }
  int error_line() const { return error_line_; }
  tsv::GraphPane* tensor_graph() const { return tensor_graph_; }
  tsv::GraphPane* kernel_graph() const { return kernel_graph_; }
  // the schedule's calls and the buffers between them (the reference's "View Kernel Graph")
  tsv::GraphPane* calls_graph() const { return calls_graph_; }
  // true when no run and no graph layout is in progress (and no Compare run waits for its turn)
  bool settled() const;
  // the run's progress while it runs, then a partial trace's label (hidden for a whole trace)
  QLabel* run_label() const { return run_label_; }

  // measuring: an event-loop heartbeat runs, and each run reports Run-to-all-panes time and the longest
  // UI-thread stall (on stderr too when `print` is set; TINYSCOPE_PERF=1 turns this on at start)
  void set_measuring(bool on, bool print);
  // from run() until every pane showed the new trace (graphs laid out), in ms; -1 before the first
  qint64 last_run_to_panes_ms() const { return last_run_to_panes_ms_; }
  // the longest event-loop gap since the last run() started (or since measuring began), in ms
  qint64 longest_stall_ms() const;

 signals:
  void run_finished(bool ok);
  void compare_finished(bool ok);
  void settled_now();

 protected:
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  QDockWidget* add_dock(const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area);
  void on_run_finished(int code, bool stopped, const QString& trace, const QString& stderr_text);
  void append_console(const QString& text, bool is_err);
  void mark_error_line(int line);
  QString script_file() const;
  void update_script_marks();
  void update_editor_selections();
  QHash<int, int> script_line_turn_;  // per script line: how many times its margin was clicked (cycles its schedules)
  void show_trace_error(const QString& what, const QString& err);
  void select_first_kernel();
  QString initial_context_;
  void check_settled();
  bool main_settled() const;
  void show_progress();
  void show_beam(const QJsonObject& beam_report);
  void show_trace_label();
  void start_compare();
  // forgets the comparison shown (the second run's trace, its console, the Values diff); with `why`, the Compare dock
  // hides and its summary says why
  void clear_compare(const QString& why = {});
  // the window's parts (main_window_build.cpp; the Compare dock: main_window_compare.cpp)
  void build_toolbar();
  void build_central();
  void build_docks();
  void build_menus();
  void build_file_menu();
  void build_status_bar();
  void build_whatif_menu(QMenu* run_menu);
  void whatif_compare();
  void fill_whatif_opts_menu(QMenu* m);
  void restore_settings();
  QWidget* build_compare_dock();
  void build_compare_controls();
  void update_compare_summary();
  void update_compare_sources();
  void on_trace_loaded(bool ok, const QString& error);
  // opening a trace (main_window_trace.cpp): a busy bar in the status bar while `path` is read ("" hides it); a
  // failure shown; a trace read shown in the panes, its console in the console
  void show_loading(const QString& path);
  bool open_trace_failed(const QString& path, const QString& err, QString* error);
  void trace_opened(bool ok, const QString& err);
  void show_opened_trace(const QString& path);
  QProgressBar* load_bar_ = nullptr;
  QString opening_trace_;  // a big trace File > Open reads off the UI thread
  void on_compare_loaded(bool ok, const QString& error);
  void on_compare_finished(int code, bool stopped, const QString& trace, const QString& stderr_text);
  void disassemble(const QString& key, const QString& lang, const QString& src);
  // what a kernel source compiles to (`tinyscope asm`), asked of a child once per source; `done` gets it (at once when
  // it is known)
  void request_assembly(const QString& lang, const QString& src, std::function<void(const QString&)> done);
  QString cached_assembly(const QString& lang, const QString& src) const;  // "" until it is in

  QString examples_dir_;
  tsv::Session* session_;
  tsv::SelectionModel* selection_;
  RunController* controller_;
  QComboBox* script_combo_;
  QComboBox* device_combo_;
  QSpinBox* repeat_spin_ = nullptr;
  QSpinBox* beam_spin_ = nullptr;
  QCheckBox* extended_box_ = nullptr;
  QProgressBar* beam_bar_ = nullptr;
  QToolButton* beam_cancel_ = nullptr;
  QAction* run_act_;
  QAction* stop_act_;
  QAction* dark_act_;
  QAction* save_act_ = nullptr;
  tsv::CodeEditor* editor_;
  QAction* large_act_ = nullptr;
  QPlainTextEdit* console_;
  QLabel* status_;
  QLabel* run_label_ = nullptr;
  QLabel* trace_error_;
  tsv::ContextsPane* contexts_;
  tsv::SchedulePane* schedule_;
  tsv::SourcePane* source_;
  tsv::TimingsPane* timings_;
  tsv::GraphPane* tensor_graph_;
  tsv::GraphPane* kernel_graph_;
  tsv::GraphPane* calls_graph_;
  // Compare with…: a second device in its own child, its schedule and timings in the Compare dock
  QComboBox* compare_combo_ = nullptr;
  RunController* compare_controller_ = nullptr;
  tsv::Session* compare_session_ = nullptr;
  tsv::SelectionModel* compare_selection_ = nullptr;
  QDockWidget* compare_dock_ = nullptr;
  QLabel* compare_label_ = nullptr;
  QLabel* divergence_label_ = nullptr;  // the first call whose output differs, a link that selects it
  tsv::CompareModel* compare_model_ = nullptr;
  tsv::OutputCompareModel* output_model_ = nullptr;
  QPlainTextEdit* compare_console_ = nullptr;
  tsv::ValuesPane* values_ = nullptr;
  tsv::AccessPanes* access_ = nullptr;  // the Access dock's (and, beside it, the compared run's kernel)
  tsv::RooflinePane* roofline_ = nullptr;
  LimitsMeasure* limits_measure_ = nullptr;
  Tour* tour_ = nullptr;
  int initial_tour_ = 0;
  bool lesson_pending_ = false;  // a lesson's run is under way: its first step is shown when it ends
  // What if: its menu's toggles, the history of runs (label, trace file in whatif_dir_), the run a what-if run is
  // compared with when it ends, and the two sides' labels for the Compare dock
  QList<QAction*> whatif_actions_;
  QComboBox* whatif_history_box_ = nullptr;
  QList<QPair<QString, QString>> whatif_history_;
  std::unique_ptr<QTemporaryDir> whatif_dir_;
  QString whatif_before_;
  QPair<QString, QString> whatif_compare_labels_;
  QDockWidget* tour_dock_ = nullptr;
  QTableView* compare_table_ = nullptr;
  tsv::SourceDiff* compare_diff_ = nullptr;
  bool compare_loaded_ = false;
  bool compare_pending_ = false;
  bool superseding_ = false;  // run() is stopping the last run to start a new one  // the compare run starts once the first device's run is over
  QString compare_name_, compare_source_;
  // the comparison's sides when they came from saved traces ("": the first is this run, the second the compare run)
  QString first_label_, compare_from_trace_;
  QString opened_trace_;  // the trace file the panes show ("": a run's)
  void show_loaded_compare();
  bool open_compare_file(const QString& path, QString* error);
  QAction* save_compare_act_ = nullptr;
  QAction* snapshots_act_ = nullptr;
  QString run_msg_;  // the finished run's status line, completed once its trace is read
  bool run_ok_ = false;  // the current compare run's trace is in compare_session_
  // measuring
  StallProbe* probe_ = nullptr;
  bool print_perf_ = false;
  QElapsedTimer run_clock_;
  bool run_unsettled_ = false;
  qint64 last_run_to_panes_ms_ = -1;
  QHash<QByteArray, QString> asm_text_;  // by the hash of the language and the source
  QHash<QByteArray, QList<std::function<void(const QString&)>>> asm_waiting_;
  QCheckBox* compare_asm_ = nullptr;
  QString script_path_;
  QString script_trace_;  // the trace whose `script` field the editor shows, until the user opens one or agrees
  std::function<bool(const QString&)> confirm_run_;
  int error_line_ = -1;
  bool restore_layout_;
  QList<QDockWidget*> default_docks_;
  QByteArray default_state_;    // the docks as build_docks() placed them (View > Reset layout)
  bool layout_pending_ = true;  // the default layout waits for the first show (docks have no size before it)
  bool state_restored_ = false;  // a saved layout was restored: the first show keeps it
  void fit_to_screen();          // the window's size bounded to screen_area()
};

}  // namespace tsgui
