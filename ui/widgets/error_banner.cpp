#include "ui/widgets/error_banner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace ampscope::ui {

ErrorBanner::ErrorBanner(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("errorBanner"));
  setAutoFillBackground(true);
  QPalette colors = palette();
  colors.setColor(QPalette::Window, QColor(0xb3, 0x26, 0x1e));
  colors.setColor(QPalette::WindowText, Qt::white);
  setPalette(colors);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(10, 6, 6, 6);
  label_ = new QLabel;
  label_->setWordWrap(true);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* dismiss = new QToolButton;
  dismiss->setText(tr("Dismiss"));
  dismiss->setAutoRaise(true);
  layout->addWidget(label_, 1);
  layout->addWidget(dismiss);
  hide();
  connect(dismiss, &QToolButton::clicked, this, &QWidget::hide);
}

void ErrorBanner::showError(const QString& title, const QString& message) {
  message_ = title + QStringLiteral(": ") + message;
  label_->setText(QStringLiteral("<b>%1:</b> %2").arg(title.toHtmlEscaped(), message.toHtmlEscaped()));
  show();
}

}  // namespace ampscope::ui
