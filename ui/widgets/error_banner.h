#pragma once
// The main window's inline error banner: one line, "Title: message", above the pages
// until dismissed or until what it was about is replaced (a new run, a file opened).
#include <QString>
#include <QWidget>

class QLabel;

namespace ampscope::ui {

class ErrorBanner : public QWidget {
  Q_OBJECT
 public:
  explicit ErrorBanner(QWidget* parent = nullptr);
  void showError(const QString& title, const QString& message);
  // "Title: message", without markup; empty while hidden.
  QString text() const { return isHidden() ? QString() : message_; }

 private:
  QLabel* label_ = nullptr;
  QString message_;
};

}  // namespace ampscope::ui
