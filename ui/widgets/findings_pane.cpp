#include "ui/widgets/findings_pane.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTextBrowser>
#include <QTreeView>
#include <QVBoxLayout>

#include "ui/models/findings_model.h"
#include "ui/models/model_roles.h"
#include "ui/widgets/pane_hint.h"

namespace ampscope::ui {

FindingsPane::FindingsPane(QWidget* parent) : QWidget(parent) {
  model_ = new FindingsModel(this);
  hint_ = makeHintLabel(tr("The report's verdict and what to change appear here once a session is shown."));

  auto* page = new QWidget;
  so_far_ = new QLabel;
  so_far_->setObjectName(QStringLiteral("findingsSoFar"));
  so_far_->setWordWrap(true);
  so_far_->setStyleSheet(QStringLiteral("font-style: italic"));
  so_far_->hide();
  verdict_ = new QLabel;
  verdict_->setObjectName(QStringLiteral("findingsVerdict"));
  verdict_->setWordWrap(true);
  verdict_->setTextFormat(Qt::RichText);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  nothing_ = new QLabel;
  nothing_->setWordWrap(true);
  tree_ = new QTreeView;
  tree_->setModel(model_);
  tree_->setHeaderHidden(true);
  tree_->setWordWrap(true);
  tree_->setUniformRowHeights(false);
  tree_->header()->setStretchLastSection(true);
  detail_ = new QTextBrowser;
  detail_->setObjectName(QStringLiteral("findingsDetail"));
  detail_->setOpenLinks(false);
  split_ = new QSplitter(Qt::Horizontal);
  split_->addWidget(tree_);
  split_->addWidget(detail_);
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(so_far_);
  layout->addWidget(verdict_);
  layout->addWidget(nothing_);
  layout->addWidget(split_, 1);

  stack_ = new QStackedWidget;
  stack_->addWidget(hint_);
  stack_->addWidget(page);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(stack_);

  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) { showDetail(current); });
}

void FindingsPane::setFindings(const profiler::SessionFindings& findings, const QString& so_far) {
  // Read again every few seconds while a run goes on: the reader's place is kept.
  const QModelIndex was = tree_->currentIndex();
  const QModelIndex was_finding = was.parent().isValid() ? was.parent() : was;
  const QString selected = was_finding.data(FindingIdRole).toString();
  so_far_->setText(so_far);
  so_far_->setVisible(!so_far.isEmpty());
  verdict_lines_.clear();
  QString html = QStringLiteral("<b>%1</b><ul style=\"margin-top: 2px; -qt-list-indent: 1\">").arg(tr("Verdict"));
  for (const std::string& sentence : findings.verdict) {
    verdict_lines_ << QString::fromStdString(sentence);
    html += QStringLiteral("<li>%1</li>").arg(verdict_lines_.back().toHtmlEscaped());
  }
  verdict_->setText(html + QStringLiteral("</ul>"));
  model_->setRecommendations(findings.recommendations);
  const bool any = !findings.recommendations.empty();
  nothing_->setText(findings.none_because.empty()
                        ? tr("What to change: nothing the recommendation rules look for was found.")
                        : tr("What to change: %1.").arg(QString::fromStdString(findings.none_because)));
  nothing_->setVisible(!any);
  split_->setVisible(any);
  tree_->expandAll();
  if (any) {
    QModelIndex current = model_->index(0, 0);
    for (int row = 0; row < model_->rowCount() && !selected.isEmpty(); ++row)
      if (model_->index(row, 0).data(FindingIdRole).toString() == selected) current = model_->index(row, 0);
    tree_->setCurrentIndex(current);
  } else {
    detail_->clear();
  }
  stack_->setCurrentIndex(1);
}

void FindingsPane::showNote(const QString& why) {
  hint_->setText(why);
  so_far_->clear();
  so_far_->hide();
  model_->setRecommendations({});
  verdict_lines_.clear();
  detail_->clear();
  stack_->setCurrentIndex(0);
}

bool FindingsPane::showsFindings() const { return stack_->currentIndex() == 1; }

QString FindingsPane::soFarText() const { return so_far_->isHidden() ? QString() : so_far_->text(); }

QString FindingsPane::verdictText() const { return verdict_lines_.join(QLatin1Char('\n')); }

QString FindingsPane::detailText() const { return detail_->toPlainText(); }

void FindingsPane::showDetail(const QModelIndex& index) {
  if (!index.isValid()) return detail_->clear();
  // An evidence line shows its recommendation's detail.
  const QModelIndex finding = index.parent().isValid() ? index.parent() : index;
  detail_->setPlainText(finding.data(DetailRole).toString());
}

}  // namespace ampscope::ui
