#pragma once
#include <QMainWindow>
#include <QString>

class QComboBox;
class QDockWidget;
class QPlainTextEdit;
class QAction;
class QLabel;

namespace tsv {
class Session;
class SelectionModel;
class ContextsPane;
class SchedulePane;
class SourcePane;
class TimingsPane;
class GraphPane;
}  // namespace tsv

namespace tsgui {
class RunController;

// The inspector: a script editor and console, the run toolbar, and dock panes over the last run's trace.
// Every pane follows one SelectionModel. The dock layout and the theme persist in QSettings.
class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const QString& examples_dir, bool restore_layout = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  void open_script(const QString& path);
  bool open_trace(const QString& path);
  void set_device(const QString& dev);
  void run();
  void stop();
  void set_dark(bool dark);
  // the docks' default sizes for the current window size
  void default_layout();

  tsv::Session* session() const { return session_; }
  tsv::SelectionModel* selection() const { return selection_; }
  RunController* controller() const { return controller_; }
  QPlainTextEdit* editor() const { return editor_; }
  QPlainTextEdit* console() const { return console_; }
  int error_line() const { return error_line_; }
  // true when no run and no graph layout is in progress
  bool settled() const;

 signals:
  void run_finished(bool ok);
  void settled_now();

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  QDockWidget* add_dock(const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area);
  void on_run_finished(int code, bool stopped, const QString& trace, const QString& stderr_text);
  void append_console(const QString& text, bool is_err);
  void mark_error_line(int line);
  void select_first_kernel();
  void check_settled();

  QString examples_dir_;
  tsv::Session* session_;
  tsv::SelectionModel* selection_;
  RunController* controller_;
  QComboBox* script_combo_;
  QComboBox* device_combo_;
  QAction* run_act_;
  QAction* stop_act_;
  QAction* dark_act_;
  QPlainTextEdit* editor_;
  QPlainTextEdit* console_;
  QLabel* status_;
  tsv::ContextsPane* contexts_;
  tsv::SchedulePane* schedule_;
  tsv::SourcePane* source_;
  tsv::TimingsPane* timings_;
  tsv::GraphPane* tensor_graph_;
  tsv::GraphPane* kernel_graph_;
  QString script_path_;
  int error_line_ = -1;
  bool restore_layout_;
  QList<QDockWidget*> default_docks_;
};

}  // namespace tsgui
