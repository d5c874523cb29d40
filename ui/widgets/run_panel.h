#pragma once
// The run's settings and its Start/Pause/Resume/Stop buttons. Reads and writes
// an engine::TrainConfig; the buttons follow the controller's RunState (the
// settings are locked while a run is active).
#include <QWidget>
#include <optional>

#include "engine/config.h"
#include "engine/events.h"
#include "profiler/capture_settings.h"
#include "profiler/script_facts.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace ampscope::ui {

class CaptureSettingsForm;
class ExactSpinBox;

class RunPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RunPanel(QWidget* parent = nullptr);

  engine::TrainConfig config() const;
  void setConfig(const engine::TrainConfig& config);
  void setRunState(engine::RunState state, bool pause_pending = false);
  profiler::CaptureSettings captureSettings() const;
  void setCaptureSettings(const profiler::CaptureSettings& settings);
  // A session recorded from a Python script: its own facts, read-only, in place
  // of the built-in run's settings (which keep their values for the next run).
  // showSettings() brings the settings back; a run that starts does so too.
  // Its "Run this script again…" button (rerunScriptRequested) is enabled where the facts say
  // how the script ran.
  void showScriptFacts(const profiler::ScriptFacts& facts);
  void showSettings();
  bool showsScriptFacts() const;
  // The facts shown; nullopt while the built-in run's settings are.
  const std::optional<profiler::ScriptFacts>& shownScriptFacts() const { return shown_facts_; }
  QPushButton* rerunScriptButton() const { return rerun_script_; }
  // The state line while a recorded session is shown: the session's state, not the built-in run's.
  void setSessionState(const QString& text);
  QString stateText() const;

  QPushButton* startButton() const { return start_; }
  QPushButton* pauseButton() const { return pause_; }
  QPushButton* resumeButton() const { return resume_; }
  QPushButton* stopButton() const { return stop_; }

 signals:
  void startRequested();
  void pauseRequested();
  void resumeRequested();
  void stopRequested();
  // "Run this script again…" beside a script's facts.
  void rerunScriptRequested();

 private:
  QWidget* buildModelGroup();
  QWidget* buildDataGroup();
  QWidget* buildTrainingGroup();
  QWidget* buildScalerGroup();
  QWidget* buildProfilingGroup();
  void updateEnabledFields();

  engine::TrainConfig base_;  // fields the panel does not show keep their values
  QWidget* settings_ = nullptr;
  QList<QWidget*> setting_groups_;       // the built-in run's groups, hidden for a script's session
  QGroupBox* script_facts_ = nullptr;     // a Python session's facts
  QFormLayout* script_facts_form_ = nullptr;
  QPushButton* rerun_script_ = nullptr;
  std::optional<profiler::ScriptFacts> shown_facts_;
  QComboBox* model_ = nullptr;
  QSpinBox* layers_ = nullptr;
  QSpinBox* width_ = nullptr;
  QSpinBox* heads_ = nullptr;
  QSpinBox* seq_len_ = nullptr;
  QComboBox* attention_ = nullptr;
  QCheckBox* channels_last_ = nullptr;
  QComboBox* data_ = nullptr;
  QLineEdit* data_path_ = nullptr;
  QToolButton* browse_ = nullptr;
  QComboBox* precision_ = nullptr;
  QComboBox* device_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QSpinBox* accumulate_ = nullptr;
  ExactSpinBox* lr_ = nullptr;
  QComboBox* optimizer_ = nullptr;
  QComboBox* recipe_ = nullptr;
  QCheckBox* fused_ = nullptr;
  QComboBox* schedule_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QComboBox* scaler_mode_ = nullptr;
  ExactSpinBox* init_scale_ = nullptr;
  ExactSpinBox* growth_factor_ = nullptr;
  ExactSpinBox* backoff_factor_ = nullptr;
  QSpinBox* growth_interval_ = nullptr;
  CaptureSettingsForm* capture_form_ = nullptr;  // the Profiling group
  QLabel* state_label_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* stop_ = nullptr;
};

}  // namespace ampscope::ui
