#include "app/gui/devices.h"

#include <exception>

#include "engine/realize/realize.h"

namespace tsgui {

QStringList device_names() {
  QStringList out;
  for (const auto& n : ts::device_names()) out << QString::fromStdString(n);
  return out;
}

QString require_device(const QString& name, QString* error) {
  try {
    return QString::fromStdString(ts::require_device(name.toStdString()));
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return {};
  }
}

}  // namespace tsgui
