#pragma once
// The precision comparison page: settings (precisions, repeats, warm-up,
// profiled steps, results file), run/stop with progress, then the per-variant
// table, the loss curves of every repeat overlaid, the per-op comparison and
// the verdict. The model, data, steps, batch and seed are the Run panel's, so a
// comparison measures exactly the training the user set up. Also shows a
// comparison file opened from disk (`ampscope compare --out`). Where that file is a
// script's comparison (`ampscope run --compare`), Run compares the script again, as its
// runs ran it, with the page's precisions, repeats, warm-up and profiled steps: the window
// runs it (scriptComparisonRequested), the page fills in as its runs end.
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>

#include "engine/config.h"
#include "profiler/compare/comparison_runner.h"
#include "profiler/script_facts.h"
#include "ui/widgets/comparison_controller.h"
#include "ui/widgets/script_runner.h"

class QCustomPlot;
class QTableView;

namespace Ui {
class ComparisonPage;
}

namespace ampscope::ui {

class OpComparisonModel;
class TableFilterProxy;
class VariantSummaryModel;

class ComparisonPage : public QWidget {
  Q_OBJECT
 public:
  using BaseConfigSource = std::function<engine::TrainConfig()>;

  explicit ComparisonPage(QWidget* parent = nullptr);
  ~ComparisonPage() override;

  // Where the model, data, steps, batch, seed and device come from (the Run panel).
  void setBaseConfigSource(BaseConfigSource source);
  // The comparison the settings describe; throws engine::ConfigError for impossible ones.
  profiler::ComparisonOptions options() const;

  void setVariants(const QStringList& variants);
  QStringList variants() const;
  void setRepeats(int repeats);
  void setWarmupSteps(int steps);
  void setProfiledSteps(int steps);
  // Inference instead of training (`ampscope compare --inference`): forward passes under
  // inference mode and the autocast, timed per batch; no scaler, no profiled pass.
  void setInference(bool inference);
  bool inference() const;
  void setOutputPath(const QString& path);

  // The Run button; false with errorOccurred when the settings are impossible or a run is active.
  // With a script as the subject, asks the window to run its comparison (scriptComparisonRequested).
  bool startComparison();
  // The script whose comparison is shown (opened, or run from the window), which Run compares
  // again; nullopt when Run compares the Run panel's built-in setup.
  const std::optional<profiler::ScriptFacts>& scriptSubject() const { return script_subject_; }
  // Run compares the Run panel's built-in setup again (the page's link beside a script's comparison).
  void compareBuiltInSetup();
  // The window runs a script's comparison (Run with a script subject, or the script run
  // dialog): Stop stops it (scriptStopRequested), and the page waits for its first run.
  // `what`: the script's name, for the progress line.
  void setScriptComparisonRunning(bool running, const QString& what = {});
  void stopComparison();
  // Shows a comparison file read by the window's FileLoader; false with
  // errorOccurred while a comparison runs. `written_live`: another process (a script's
  // `ampscope run --compare`) still adds runs to it, and the window reads it again as it does.
  bool showOpenedComparison(const ComparisonResultsPtr& results, bool written_live = false);
  void showResults(const ComparisonResultsPtr& results);
  // Training and a comparison compete for the same device: the window keeps one at a time.
  void setTrainingActive(bool active);
  void shutdown();

  bool isRunning() const;
  // The file of the comparison shown (or running); empty when none.
  QString comparisonPath() const;
  ComparisonResultsPtr results() const { return results_; }
  ComparisonController* controller() const { return controller_; }
  VariantSummaryModel* summaryModel() const { return summary_model_; }
  OpComparisonModel* opModel() const { return op_model_; }
  TableFilterProxy* opProxy() const { return op_proxy_; }
  QCustomPlot* lossPlot() const;
  // The loss plot shows each variant's loss, or its difference to fp32's.
  void setLossDifference(bool difference);
  QString progressText() const;
  QString verdictText() const;  // plain text, one line per verdict sentence

 signals:
  void errorOccurred(const QString& title, const QString& message);
  void runningChanged(bool running);
  // The page's own run showed results: the runs ended so far (complete false) or all of them.
  void runResultsShown(const ampscope::ui::ComparisonResultsPtr& results);
  void reportRequested();
  // A comparison file was written (so the window can list it in Open recent).
  void comparisonWritten(const QString& path);
  // Run with a script subject: the script's comparison to run (`ampscope run --compare`).
  void scriptComparisonRequested(const ScriptRunRequest& request);
  // Stop while the window runs a script's comparison.
  void scriptStopRequested();

 protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void onProgress(const ComparisonProgressInfo& progress);
  void onFinished(bool stopped);
  void onFailed(const QString& message);
  void updateButtons();
  void updateModeLabels();  // the fp16 and warm-up labels say what an inference comparison does
  void updateBaseLabel();
  void rebuildLossPlot();
  void fitSummaryHeight();
  void browseOutput();
  QString defaultOutputPath() const;
  // The results file chosen (or a fresh default); throws engine::ConfigError for an existing
  // one the file dialog was not asked to replace.
  QString checkedOutputPath() const;
  // Run with a script subject: the window's run of it, with the page's settings.
  bool startScriptComparison();
  // Each run's steps in the script's comparison (its runs' --max-steps), so Run repeats them.
  int scriptSteps() const;

  std::unique_ptr<::Ui::ComparisonPage> ui_;
  BaseConfigSource base_source_;
  ComparisonController* controller_ = nullptr;
  VariantSummaryModel* summary_model_ = nullptr;
  TableFilterProxy* summary_proxy_ = nullptr;
  OpComparisonModel* op_model_ = nullptr;
  TableFilterProxy* op_proxy_ = nullptr;
  ComparisonResultsPtr results_;
  QString running_path_;
  bool running_inference_ = false;  // the running comparison times inference batches
  bool training_active_ = false;
  QString overwrite_path_;  // a results file the file dialog asked about replacing
  std::optional<profiler::ScriptFacts> script_subject_;
  bool script_running_ = false;
};

}  // namespace ampscope::ui
