// The GStreamer headers the WebRTC engine uses. webrtcbin's API is marked unstable upstream; this
// project pins its use to GStreamer 1.22 (Debian 12), so the warning is silenced here on purpose.
#ifndef CGSTREAMER_SHIM_H
#define CGSTREAMER_SHIM_H
#define GST_USE_UNSTABLE_API 1
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#endif
