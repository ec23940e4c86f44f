#pragma once
// The engine's devices for the window's choosers (the engine's own list: ts::device_names, ts::require_device).
#include <QString>
#include <QStringList>

namespace tsgui {

// the values DEV takes, in the order a user is shown them
QStringList device_names();
// `name` canonicalized ("cpu" -> "CPU"), or an empty string with *error naming it and the devices that exist
QString require_device(const QString& name, QString* error = nullptr);

}  // namespace tsgui
