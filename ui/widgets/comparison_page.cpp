#include "ui/widgets/comparison_page.h"

#include <qcustomplot.h>

#include <QDateTime>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QScrollBar>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <cmath>

#include "engine/errors.h"
#include "ui/models/formatting.h"
#include "ui/models/op_comparison_model.h"
#include "ui/models/session_io.h"
#include "ui/models/table_filter_proxy.h"
#include "ui/models/variant_summary_model.h"
#include "ui/widgets/plot_style.h"
#include "ui/widgets/script_run_dialog.h"
#include "ui/widgets/scroll_area.h"
#include "ui/widgets/table_view.h"
#include "ui_comparison_page.h"

namespace ampscope::ui {
namespace {

QString progressLine(const ComparisonProgressInfo& p, bool inference) {
  if (!p.finished_message.isEmpty())
    return QObject::tr("[%1/%2] %3").arg(p.run_index + 1).arg(p.run_count).arg(p.finished_message);
  const QString pass = p.repeat < 0 ? QObject::tr("profiled pass") : QObject::tr("repeat %1").arg(p.repeat + 1);
  return (inference ? QObject::tr("[%1/%2] %3 · %4 · batch %5 / %6 · loss %7")
                    : QObject::tr("[%1/%2] %3 · %4 · step %5 / %6 · loss %7"))
      .arg(p.run_index + 1)
      .arg(p.run_count)
      .arg(p.variant, pass)
      .arg(p.step)
      .arg(p.steps)
      .arg(p.loss, 0, 'f', 4);
}

}  // namespace

ComparisonPage::ComparisonPage(QWidget* parent) : QWidget(parent), ui_(std::make_unique<::Ui::ComparisonPage>()) {
  // The form in a scroll area (scroll_area.h): the page may be shorter than its settings,
  // verdict, table and plots need.
  auto* content = new QWidget;
  ui_->setupUi(content);
  content->setObjectName(QStringLiteral("comparisonContent"));
  setObjectName(QStringLiteral("ComparisonPage"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(inScrollArea(content));
  controller_ = new ComparisonController(this);

  summary_model_ = new VariantSummaryModel(this);
  summary_proxy_ = new TableFilterProxy(this);
  summary_proxy_->setSourceModel(summary_model_);
  styleTableView(ui_->summaryView, summary_proxy_);
  ui_->summaryView->sortByColumn(-1, Qt::AscendingOrder);  // the order the variants were asked for
  ui_->summaryView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

  op_model_ = new OpComparisonModel(this);
  op_proxy_ = new TableFilterProxy(this);
  op_proxy_->setSourceModel(op_model_);
  styleTableView(ui_->opsView, op_proxy_);
  ui_->opsView->sortByColumn(-1, Qt::AscendingOrder);  // match_ops' order: the baseline's time, largest first
  ui_->opsView->horizontalHeader()->setMaximumSectionSize(220);  // long shapes elide; the tooltip has them

  ui_->tf32Check->setToolTip(variantDescription(QStringLiteral("tf32")));
  ui_->fp32Check->setToolTip(variantDescription(QStringLiteral("fp32")));
  ui_->fp16Check->setToolTip(variantDescription(QStringLiteral("fp16")));
  ui_->bf16Check->setToolTip(variantDescription(QStringLiteral("bf16")));
  for (QCheckBox* box : {ui_->fp32Check, ui_->tf32Check, ui_->fp16Check, ui_->bf16Check})
    connect(box, &QCheckBox::toggled, this, &ComparisonPage::updateButtons);
  ui_->inferenceCheck->setToolTip(
      tr("Compare inference instead of training: each precision runs the Run panel's steps as forward "
         "batches of a fresh model in eval mode, under inference mode and the autocast, and times each "
         "batch (as <tt>ampscope compare --inference</tt>). No loss scaler and no profiled pass."));
  connect(ui_->inferenceCheck, &QCheckBox::toggled, this, &ComparisonPage::updateModeLabels);
  connect(ui_->runButton, &QPushButton::clicked, this, &ComparisonPage::startComparison);
  connect(ui_->stopButton, &QPushButton::clicked, this, &ComparisonPage::stopComparison);
  connect(ui_->reportButton, &QPushButton::clicked, this, &ComparisonPage::reportRequested);
  connect(ui_->browseButton, &QToolButton::clicked, this, &ComparisonPage::browseOutput);
  ui_->baseLabel->setTextFormat(Qt::RichText);
  connect(ui_->baseLabel, &QLabel::linkActivated, this, &ComparisonPage::compareBuiltInSetup);
  connect(ui_->outputEdit, &QLineEdit::textEdited, this, [this] { overwrite_path_.clear(); });
  connect(ui_->opFilterEdit, &QLineEdit::textChanged, op_proxy_, &TableFilterProxy::setTextFilter);
  connect(ui_->lossModeCombo, &QComboBox::currentIndexChanged, this, &ComparisonPage::rebuildLossPlot);

  connect(controller_, &ComparisonController::started, this, [this] {
    ui_->progressBar->setValue(0);
    ui_->progressLabel->setText(tr("Starting…"));
    updateButtons();
    emit runningChanged(true);
  });
  connect(controller_, &ComparisonController::progress, this, &ComparisonPage::onProgress);
  connect(controller_, &ComparisonController::resultsChanged, this, &ComparisonPage::showResults);
  connect(controller_, &ComparisonController::resultsChanged, this, &ComparisonPage::runResultsShown);  // after
  connect(controller_, &ComparisonController::finished, this, &ComparisonPage::onFinished);
  connect(controller_, &ComparisonController::failed, this, &ComparisonPage::onFailed);

  QCustomPlot* plot = ui_->lossPlot;
  plot->setMinimumSize(260, 150);
  plot->setPlottingHint(QCP::phFastPolylines, true);  // see LivePlots: wide polylines are slow
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  applyPlotStyle(plot, palette());
  plot->xAxis->setLabel(tr("step"));
  plot->yAxis->setLabel(tr("loss"));
  plot->legend->setVisible(true);
  plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot->setToolTip(tr("Training loss per step of every repeat, one color per precision: does the "
                      "lower precision train the same? The dashed line ends the warm-up."));

  ui_->verdictLabel->setText(
      tr("Choose the precisions and press <b>Run comparison</b>: the model, data, steps, batch "
         "and seed of the Run panel train once per precision and repeat, interleaved. Or open a "
         "comparison file (<tt>ampscope compare --out FILE</tt>)."));
  ui_->resultsSplitter->setStretchFactor(0, 1);
  ui_->resultsSplitter->setStretchFactor(1, 3);
  ui_->detailSplitter->setStretchFactor(0, 2);
  ui_->detailSplitter->setStretchFactor(1, 3);
  updateButtons();
}

ComparisonPage::~ComparisonPage() = default;

void ComparisonPage::setBaseConfigSource(BaseConfigSource source) {
  base_source_ = std::move(source);
  updateBaseLabel();
}

profiler::ComparisonOptions ComparisonPage::options() const {
  profiler::ComparisonOptions o;
  o.base = base_source_ ? base_source_() : engine::TrainConfig{};
  o.variants.clear();
  for (const QString& v : variants()) o.variants.push_back(v.toStdString());
  o.repeats = ui_->repeatsSpin->value();
  o.warmup_steps = ui_->warmupSpin->value();
  o.inference = inference();
  o.profile_steps = o.inference ? 0 : ui_->profileSpin->value();
  const QString chosen = ui_->outputEdit->text().trimmed();
  o.overwrite = !overwrite_path_.isEmpty() && overwrite_path_ == chosen;
  o.out_path = checkedOutputPath().toStdString();
  profiler::validate(o);
  return o;
}

QString ComparisonPage::checkedOutputPath() const {
  const QString chosen = ui_->outputEdit->text().trimmed();
  if (chosen.isEmpty()) return defaultOutputPath();
  if (overwrite_path_ != chosen && QFileInfo::exists(chosen))
    throw engine::ConfigError(
        tr("%1 exists; choose another results file (… button) to replace or keep it").arg(chosen).toStdString());
  return chosen;
}

void ComparisonPage::setVariants(const QStringList& variants) {
  ui_->fp32Check->setChecked(variants.contains(QStringLiteral("fp32")));
  ui_->tf32Check->setChecked(variants.contains(QStringLiteral("tf32")));
  ui_->fp16Check->setChecked(variants.contains(QStringLiteral("fp16")));
  ui_->bf16Check->setChecked(variants.contains(QStringLiteral("bf16")));
}

QStringList ComparisonPage::variants() const {
  const QCheckBox* boxes[] = {ui_->fp32Check, ui_->tf32Check, ui_->fp16Check, ui_->bf16Check};
  QStringList out;
  for (size_t i = 0; i < std::size(boxes); ++i)
    if (boxes[i]->isChecked()) out << precisionVariants()[i];
  return out;
}

void ComparisonPage::setRepeats(int repeats) { ui_->repeatsSpin->setValue(repeats); }
void ComparisonPage::setWarmupSteps(int steps) { ui_->warmupSpin->setValue(steps); }
void ComparisonPage::setProfiledSteps(int steps) { ui_->profileSpin->setValue(steps); }
void ComparisonPage::setInference(bool inference) { ui_->inferenceCheck->setChecked(inference); }
bool ComparisonPage::inference() const { return ui_->inferenceCheck->isChecked(); }

void ComparisonPage::updateModeLabels() {
  const bool inference = this->inference();
  ui_->fp16Check->setText(inference ? tr("fp16") : tr("fp16 + GradScaler"));
  ui_->warmupLabel->setText(inference ? tr("Warm-up batches") : tr("Warm-up steps"));
  updateButtons();
}
void ComparisonPage::setOutputPath(const QString& path) {
  ui_->outputEdit->setText(path);
  overwrite_path_.clear();
}

bool ComparisonPage::startComparison() {
  if (training_active_) {
    emit errorOccurred(tr("Cannot start the comparison"), tr("a training run is in progress; stop it first"));
    return false;
  }
  if (controller_->isActive()) {
    emit errorOccurred(tr("Cannot start the comparison"), tr("a comparison is already running"));
    return false;
  }
  if (script_subject_) return startScriptComparison();
  profiler::ComparisonOptions o;
  try {
    o = options();
  } catch (const std::exception& e) {
    emit errorOccurred(tr("Cannot start the comparison"), QString::fromUtf8(e.what()));
    return false;
  }
  const QString path = QString::fromStdString(o.out_path);
  QDir().mkpath(QFileInfo(path).absolutePath());
  running_path_ = path;
  running_inference_ = o.inference;
  updateBaseLabel();
  return controller_->start(std::move(o));
}

bool ComparisonPage::startScriptComparison() {
  const auto refuse = [this](const QString& why) {
    emit errorOccurred(tr("Cannot compare the script again"), why);
    return false;
  };
  std::optional<ScriptRunRequest> as_ran = ScriptRunDialog::rerunRequest(*script_subject_);
  if (!as_ran)
    return refuse(tr("this comparison does not say how its script was run (written before ampscope recorded "
                     "it): File → Run a Python script…, Compare precisions"));
  ScriptRunRequest& r = *as_ran;
  r.compare = variants();
  r.repeats = ui_->repeatsSpin->value();
  r.warmup_steps = ui_->warmupSpin->value();
  r.profiled_steps = ui_->profileSpin->value();
  r.max_steps = scriptSteps();
  if (r.compare.size() < 2) return refuse(tr("choose at least two precisions to compare"));
  if (r.warmup_steps >= r.max_steps)
    return refuse(
        tr("%1 warm-up steps leave none to time: each run has %2 steps").arg(r.warmup_steps).arg(r.max_steps));
  try {
    r.session_path = checkedOutputPath();
  } catch (const std::exception& e) {
    return refuse(QString::fromUtf8(e.what()));
  }
  QDir().mkpath(QFileInfo(r.session_path).absolutePath());
  emit scriptComparisonRequested(r);
  return true;
}

int ComparisonPage::scriptSteps() const {
  const int64_t steps = script_subject_ ? script_subject_->max_steps : 0;
  return static_cast<int>(steps > 0 ? steps : profiler::kDefaultComparedSteps);
}

void ComparisonPage::compareBuiltInSetup() {
  script_subject_.reset();
  updateBaseLabel();
  updateButtons();
}

void ComparisonPage::setScriptComparisonRunning(bool running, const QString& what) {
  if (running == script_running_) return;
  script_running_ = running;
  if (running) {
    // The page shows the new comparison from its first finished run on; until then, nothing older.
    showResults(nullptr);
    ui_->verdictLabel->setText(tr("No run has finished yet."));
    ui_->progressBar->setValue(0);
    ui_->progressLabel->setText(
        tr("Running %1's comparison: the page fills in as its runs end (its output: the Script pane)").arg(what));
  } else if (!results_) {
    ui_->progressLabel->setText(tr("The script's comparison ended before a run finished: see the Script pane"));
  }
  updateButtons();
}

void ComparisonPage::stopComparison() {
  if (!controller_->isActive() && script_running_) {
    emit scriptStopRequested();
    return;
  }
  if (!controller_->isActive()) return;
  controller_->stop();
  ui_->progressLabel->setText(tr("Stopping after the step in progress…"));
  ui_->stopButton->setEnabled(false);
}

void ComparisonPage::shutdown() { controller_->shutdown(); }

bool ComparisonPage::showOpenedComparison(const ComparisonResultsPtr& results, bool written_live) {
  const QString& path = results->path;
  if (controller_->isActive()) {
    emit errorOccurred(tr("Cannot open %1").arg(QFileInfo(path).fileName()),
                       tr("a comparison is running; stop it first"));
    return false;
  }
  // The settings that made it, so "Run comparison" repeats it (into a new file).
  const profiler::Comparison& c = *results->report.comparison;
  QStringList names;
  int64_t profiled = 0;
  for (const auto& v : c.variants) {
    names << QString::fromStdString(v.variant);
    profiled = std::max(profiled, v.profiled_steps);
  }
  setVariants(names);
  // A script's comparison makes Run compare that script again, each run as long as these were.
  script_subject_ = c.script;
  updateBaseLabel();
  setRepeats(static_cast<int>(c.planned_repeats));
  setWarmupSteps(static_cast<int>(c.warmup_steps));
  setInference(c.inference);
  if (!c.inference) setProfiledSteps(static_cast<int>(profiled));
  setOutputPath({});
  showResults(results);
  ui_->progressBar->setValue(0);
  // What was compared, as the file says it: `ampscope run --compare` of a script names the
  // script and its model, which the Run panel (the built-in setup) does not show.
  const QString what = QString::fromStdString(c.meta.model);
  if (written_live) {
    qint64 timed = 0, profiled_runs = 0;
    for (const auto& v : c.variants) {
      timed += static_cast<qint64>(v.repeats.size());
      profiled_runs += v.profiled_steps > 0 ? 1 : 0;
    }
    const qint64 planned = c.planned_repeats * static_cast<qint64>(c.variants.size());
    const QString done = timed < planned ? tr("%1 of %2 timed runs finished").arg(timed).arg(planned)
                                         : tr("timed runs finished; %1 of %2 profiled runs")
                                               .arg(profiled_runs)
                                               .arg(c.variants.size());
    ui_->progressLabel->setText(tr("Running %1 (%2): %3; the page fills in as each run ends")
                                    .arg(QFileInfo(path).fileName(), what.isEmpty() ? tr("a script") : what, done));
    return true;
  }
  const QString opened = what.isEmpty() ? tr("Opened %1").arg(QFileInfo(path).fileName())
                                        : tr("Opened %1: %2").arg(QFileInfo(path).fileName(), what);
  ui_->progressLabel->setText(c.inference ? tr("%1, an inference comparison (latency per batch)").arg(opened) : opened);
  return true;
}

void ComparisonPage::showResults(const ComparisonResultsPtr& results) {
  results_ = results;
  if (!results_ || !results_->report.comparison) {
    summary_model_->clear();
    op_model_->clear();
    rebuildLossPlot();
    updateButtons();
    return;
  }
  const profiler::ReportData& report = results_->report;
  summary_model_->setComparison(*report.comparison, report.variant_summaries);
  op_model_->setComparison(*report.comparison, report.op_rows);
  ui_->opsView->resizeColumnsToContents();
  fitSummaryHeight();
  QStringList lines;
  for (const auto& sentence : report.verdict) lines << QString::fromStdString(sentence).toHtmlEscaped();
  ui_->verdictLabel->setText(lines.isEmpty() ? tr("No run has finished yet.")
                                             : QStringLiteral("<ul style=\"margin:0\"><li>%1</li></ul>")
                                                   .arg(lines.join(QStringLiteral("</li><li>"))));
  rebuildLossPlot();
  updateButtons();
}

void ComparisonPage::setTrainingActive(bool active) {
  training_active_ = active;
  updateButtons();
}

bool ComparisonPage::isRunning() const { return controller_->isActive(); }

QString ComparisonPage::comparisonPath() const {
  if (controller_->isActive()) return running_path_;
  return results_ ? results_->path : QString();
}

QCustomPlot* ComparisonPage::lossPlot() const { return ui_->lossPlot; }

void ComparisonPage::setLossDifference(bool difference) { ui_->lossModeCombo->setCurrentIndex(difference ? 1 : 0); }

// Every variant's row visible without scrolling (at most the four variants there are).
void ComparisonPage::fitSummaryHeight() {
  QTableView* view = ui_->summaryView;
  const int rows = std::max(2, summary_model_->rowCount());
  const int height = view->horizontalHeader()->sizeHint().height() + rows * view->verticalHeader()->defaultSectionSize() +
                     2 * view->frameWidth() + view->horizontalScrollBar()->sizeHint().height();
  view->setMinimumHeight(height);
}

QString ComparisonPage::progressText() const { return ui_->progressLabel->text(); }

QString ComparisonPage::verdictText() const {
  if (!results_) return {};
  QStringList lines;
  for (const auto& sentence : results_->report.verdict) lines << QString::fromStdString(sentence);
  return lines.join(QLatin1Char('\n'));
}

void ComparisonPage::showEvent(QShowEvent* event) {
  updateBaseLabel();  // the Run panel may have changed while the page was hidden
  QWidget::showEvent(event);
}

void ComparisonPage::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) {
    applyPlotStyle(ui_->lossPlot, palette());
    rebuildLossPlot();
  }
  QWidget::changeEvent(event);
}

void ComparisonPage::onProgress(const ComparisonProgressInfo& progress) {
  ui_->progressBar->setValue(static_cast<int>(std::lround(progress.fraction() * ui_->progressBar->maximum())));
  ui_->progressLabel->setText(progressLine(progress, running_inference_));
}

void ComparisonPage::onFinished(bool stopped) {
  const QString path = results_ ? results_->path : running_path_;
  const bool written = !path.isEmpty() && QFileInfo::exists(path);
  if (!stopped) ui_->progressBar->setValue(ui_->progressBar->maximum());
  ui_->progressLabel->setText(stopped ? (written ? tr("Stopped; the finished runs are kept in %1").arg(path)
                                                 : tr("Stopped before any run finished"))
                                      : tr("Finished; results in %1").arg(path));
  updateButtons();
  emit runningChanged(false);
  if (written) emit comparisonWritten(path);
}

void ComparisonPage::onFailed(const QString& message) {
  ui_->progressLabel->setText(tr("The comparison did not run"));
  updateButtons();
  emit runningChanged(false);
  emit errorOccurred(tr("The comparison failed"), message);
}

void ComparisonPage::updateButtons() {
  const bool running = controller_->isActive();
  const bool unrunnable_script = script_subject_ && !script_subject_->command;
  ui_->runButton->setEnabled(!running && !training_active_ && !variants().isEmpty() && !unrunnable_script);
  ui_->runButton->setToolTip(training_active_ ? tr("Stop the training run first: both would share the device")
                             : variants().isEmpty() ? tr("Choose at least one precision")
                             : unrunnable_script    ? tr("The file does not say how its script ran")
                             : script_subject_      ? tr("Compare the script again, as its runs ran it")
                                                    : QString());
  ui_->stopButton->setEnabled(running || script_running_);
  for (QWidget* w : std::initializer_list<QWidget*>{ui_->fp32Check, ui_->tf32Check, ui_->fp16Check, ui_->bf16Check,
                                                    ui_->repeatsSpin, ui_->warmupSpin, ui_->outputEdit,
                                                    ui_->browseButton})
    w->setEnabled(!running);
  // A script's comparison trains (`ampscope run --compare` times no inference).
  ui_->inferenceCheck->setEnabled(!running && !script_subject_);
  // An inference comparison has no profiled pass (ComparisonOptions::inference).
  ui_->profileSpin->setEnabled(!running && !inference());
  ui_->profileLabel->setEnabled(!inference());
  ui_->reportButton->setEnabled(!running && results_ && !results_->path.isEmpty());
}

void ComparisonPage::updateBaseLabel() {
  const QString built_in_link = QStringLiteral("<a href=\"built-in\">%1</a>");
  if (script_subject_) {
    const profiler::ScriptFacts& f = *script_subject_;
    const QString shown = (QString::fromStdString(f.script) +
                           (f.arguments.empty() ? QString() : QLatin1Char(' ') + QString::fromStdString(f.arguments)))
                              .toHtmlEscaped();
    if (!f.command) {
      ui_->baseLabel->setText(
          tr("Shown: a comparison of the script <tt>%1</tt>, from a file that does not say how it ran (written "
             "before ampscope recorded it): to compare it again, File → Run a Python script…, Compare "
             "precisions. %2")
              .arg(shown, built_in_link.arg(tr("Compare the Run panel's built-in setup"))));
      return;
    }
    const profiler::ScriptCommand& c = *f.command;
    ui_->baseLabel->setText(
        tr("Runs your script <tt>%1</tt> in each precision, as its runs ran (Python <tt>%2</tt>, from <tt>%3</tt>), "
           "each stopped after %4 steps; warm-up steps are left out of the timing, timing runs are never "
           "profiled (<tt>ampscope run --compare</tt>). %5")
            .arg(shown, QString::fromStdString(c.python).toHtmlEscaped(),
                 QString::fromStdString(c.working_directory).toHtmlEscaped())
            .arg(scriptSteps())
            .arg(built_in_link.arg(tr("Compare the Run panel's built-in setup instead"))));
    return;
  }
  if (!base_source_) {
    ui_->baseLabel->setText(tr("Model and data: the defaults (no Run panel attached)."));
    return;
  }
  const engine::TrainConfig c = base_source_();
  ui_->baseLabel->setText(
      tr("Trains the Run panel's built-in setup in each precision: %1 on %2 data, %3 steps, batch %4%5, seed %6, "
         "device %7. Warm-up steps are left out of the timing; timing runs are never profiled. Your own "
         "script's comparison: File → Run a Python script…, Compare precisions.")
          .arg(QString::fromStdString(std::string(engine::to_string(c.model.kind))),
               QString::fromStdString(std::string(engine::to_string(c.data.kind))))
          .arg(c.steps)
          .arg(c.batch_size)
          .arg(c.accumulation_steps > 1 ? tr(" × %1 accumulated").arg(c.accumulation_steps) : QString())
          .arg(c.seed)
          .arg(QString::fromStdString(std::string(engine::to_string(c.device)))));
}

void ComparisonPage::rebuildLossPlot() {
  QCustomPlot* plot = ui_->lossPlot;
  plot->clearGraphs();
  plot->clearItems();
  const bool difference = ui_->lossModeCombo->currentIndex() == 1;
  plot->yAxis->setLabel(difference ? tr("loss − fp32 loss") : tr("loss"));
  plot->xAxis->setLabel(tr("step"));
  if (results_ && results_->report.comparison) {
    const profiler::Comparison& c = *results_->report.comparison;
    if (c.inference) plot->xAxis->setLabel(tr("inference batch"));
    const auto base = profiler::baseline_index(c);
    for (size_t v = 0; v < c.variants.size(); ++v) {
      const auto& run = c.variants[v];
      if (difference && (!base || *base == v)) continue;
      const QColor color = variantColor(run.variant);
      for (size_t r = 0; r < run.repeats.size(); ++r) {
        // The same repeat of fp32 when it finished, else its first: the same seed either way.
        const std::vector<profiler::StepRecord>* reference = nullptr;
        if (difference) {
          const auto& base_repeats = c.variants[*base].repeats;
          if (base_repeats.empty()) continue;
          reference = &base_repeats[std::min(r, base_repeats.size() - 1)];
        }
        QVector<double> x, y;
        x.reserve(static_cast<qsizetype>(run.repeats[r].size()));
        y.reserve(static_cast<qsizetype>(run.repeats[r].size()));
        for (size_t i = 0; i < run.repeats[r].size(); ++i) {
          double value = run.repeats[r][i].loss;
          if (reference) value = i < reference->size() ? value - (*reference)[i].loss : std::nan("");
          if (!std::isfinite(value)) continue;  // a diverged step: the status column says so
          x << static_cast<double>(run.repeats[r][i].step);
          y << value;
        }
        QCPGraph* g = plot->addGraph();
        g->setData(x, y, true);
        QColor pen_color = color;
        if (r > 0) pen_color.setAlpha(150);  // later repeats lighter: the first one reads as the line
        g->setPen(QPen(pen_color, r == 0 ? 1.6 : 1.0));
        g->setName(QString::fromStdString(run.variant));
        if (r > 0) g->removeFromLegend();
      }
    }
    if (c.warmup_steps > 0 && plot->graphCount() > 0) {
      auto* line = new QCPItemStraightLine(plot);
      const double x = static_cast<double>(c.warmup_steps) + 0.5;
      line->point1->setCoords(x, 0);
      line->point2->setCoords(x, 1);
      line->setPen(QPen(seriesColors(palette()).faint, 1, Qt::DashLine));
    }
    plot->rescaleAxes();
  }
  plot->legend->setVisible(plot->graphCount() > 0);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void ComparisonPage::browseOutput() {
  const QString start = ui_->outputEdit->text().isEmpty() ? defaultOutputPath() : ui_->outputEdit->text();
  QString path = QFileDialog::getSaveFileName(this, tr("Comparison results file"), start,
                                              tr("ampscope sessions (*.%1)").arg(kSessionSuffix));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + QLatin1String(kSessionSuffix);
  ui_->outputEdit->setText(path);
  // The dialog asked before replacing an existing file.
  overwrite_path_ = QFileInfo::exists(path) ? path : QString();
}

QString ComparisonPage::defaultOutputPath() const {
  const QString dir =
      QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/comparisons");
  return dir + QStringLiteral("/comparison-%1.%2")
                   .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz")),
                        QLatin1String(kSessionSuffix));
}

}  // namespace ampscope::ui
