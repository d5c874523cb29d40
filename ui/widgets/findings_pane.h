#pragma once
// The report's findings of the shown session (profiler::session_findings, as the HTML report,
// `ampscope summary` and the JSON summary have them): the verdict's sentences, then what to
// change, a recommendation a row with its evidence under it, and the selected one's detail
// (what was seen, what to do) beside them. A precision comparison's are its verdict and each
// precision's recommendations (profiler::comparison_findings). A run still going (a built-in run,
// a followed session) shows them so far, read again as it goes; a distributed run's ranks get a
// note saying why there are none.
#include <QWidget>

#include "profiler/report/findings.h"

class QLabel;
class QSplitter;
class QStackedWidget;
class QTextBrowser;
class QTreeView;

namespace ampscope::ui {

class FindingsModel;

class FindingsPane : public QWidget {
  Q_OBJECT
 public:
  explicit FindingsPane(QWidget* parent = nullptr);

  // `so_far`, when not empty, says the session is still being written (the pane is refreshed
  // as it grows); the selected recommendation stays selected when it is still among them.
  void setFindings(const profiler::SessionFindings& findings, const QString& so_far = {});
  // Nothing to show: `why` in the pane's place.
  void showNote(const QString& why);

  FindingsModel* model() const { return model_; }
  QTreeView* tree() const { return tree_; }
  bool showsFindings() const;
  QString soFarText() const;    // empty when the findings are of a whole run
  QString verdictText() const;  // the verdict's sentences, a line each
  QString detailText() const;   // the selected recommendation's detail

 private:
  void showDetail(const QModelIndex& index);

  QStackedWidget* stack_ = nullptr;
  QLabel* hint_ = nullptr;
  QLabel* so_far_ = nullptr;
  QLabel* verdict_ = nullptr;
  QLabel* nothing_ = nullptr;  // no recommendation fired
  QSplitter* split_ = nullptr;  // the tree, the selected recommendation's detail beside it
  QTreeView* tree_ = nullptr;
  QTextBrowser* detail_ = nullptr;
  FindingsModel* model_ = nullptr;
  QStringList verdict_lines_;
};

}  // namespace ampscope::ui
