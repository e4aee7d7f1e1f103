// Box geometry (box_geometry.h): boxes through the transform's own plan.
#include "libshard/image/box_geometry.h"

#include <algorithm>
#include <utility>

namespace libshard::image {
namespace {

float Unit(double v) { return static_cast<float>(std::clamp(v, 0.0, 1.0)); }

}  // namespace

PixelMap PixelMapFromGeometry(const Geometry& g) {
  PixelMap m;
  m.src_x = g.box.x0;
  m.src_y = g.box.y0;
  m.src_w = g.box.x1 - g.box.x0;
  m.src_h = g.box.y1 - g.box.y0;
  m.dst_x = g.offset_x;
  m.dst_y = g.offset_y;
  m.dst_w = g.scaled_width;
  m.dst_h = g.scaled_height;
  m.src_w_px = g.src_width;
  m.src_h_px = g.src_height;
  m.out_w = g.out_width;
  m.out_h = g.out_height;
  return m;
}

StatusOr<PixelMap> PlanPixelMap(int src_width, int src_height, const TransformSpec& spec) {
  LIBSHARD_ASSIGN_OR_RETURN(Geometry g, PlanGeometry(src_width, src_height, spec));
  return PixelMapFromGeometry(g);
}

MappedBoxes MapBoxes(const std::vector<Box>& in, const PixelMap& m, const BoxMapOptions& o) {
  MappedBoxes out;
  out.fate.assign(in.size(), kBoxDropped);
  if (m.src_w <= 0 || m.src_h <= 0 || m.out_w <= 0 || m.out_h <= 0 || m.src_w_px <= 0 || m.src_h_px <= 0) {
    out.dropped = in.size();
    return out;
  }
  // The part of the source that reaches the output: the source rectangle
  // within the image (letterbox and padding reach past it).
  const double vx0 = std::max(0.0, m.src_x), vx1 = std::min<double>(m.src_w_px, m.src_x + m.src_w);
  const double vy0 = std::max(0.0, m.src_y), vy1 = std::min<double>(m.src_h_px, m.src_y + m.src_h);
  const double sx = m.dst_w / m.src_w, sy = m.dst_h / m.src_h;
  for (size_t i = 0; i < in.size(); ++i) {
    const Box& b = in[i];
    const double bx0 = double(b.xmin) * m.src_w_px, bx1 = double(b.xmax) * m.src_w_px;
    const double by0 = double(b.ymin) * m.src_h_px, by1 = double(b.ymax) * m.src_h_px;
    const double cx0 = std::max(bx0, vx0), cx1 = std::min(bx1, vx1);
    const double cy0 = std::max(by0, vy0), cy1 = std::min(by1, vy1);
    const double area = (bx1 - bx0) * (by1 - by0);
    bool keep;
    if (cx1 < cx0 || cy1 < cy0) {
      keep = false;
    } else if (area <= 0) {
      keep = true;  // a point or a line inside the visible region
    } else {
      const double visible = (cx1 - cx0) * (cy1 - cy0) / area;
      keep = visible > 0 && visible >= o.min_visible;
    }
    if (!keep) {
      ++out.dropped;
      continue;
    }
    const bool clipped = cx0 != bx0 || cx1 != bx1 || cy0 != by0 || cy1 != by1;
    if (clipped) ++out.clipped;
    out.fate[i] = clipped ? kBoxClipped : kBoxKept;
    Box r;
    r.xmin = Unit((m.dst_x + (cx0 - m.src_x) * sx) / m.out_w);
    r.xmax = Unit((m.dst_x + (cx1 - m.src_x) * sx) / m.out_w);
    r.ymin = Unit((m.dst_y + (cy0 - m.src_y) * sy) / m.out_h);
    r.ymax = Unit((m.dst_y + (cy1 - m.src_y) * sy) / m.out_h);
    if (m.flip_x) {
      const float x0 = 1.0f - r.xmax, x1 = 1.0f - r.xmin;
      r.xmin = x0;
      r.xmax = x1;
    }
    out.boxes.push_back(r);
    out.kept.push_back(i);
  }
  return out;
}

Box OrientBox(const Box& b, int exif_orientation) {
  // Orient() fills output (x, y) from source (sx, sy); in normalised
  // coordinates each case is an axis flip and / or a transpose.
  float x0 = b.xmin, x1 = b.xmax, y0 = b.ymin, y1 = b.ymax;
  const auto flip = [](float* lo, float* hi) {
    const float l = 1.0f - *hi, h = 1.0f - *lo;
    *lo = l;
    *hi = h;
  };
  switch (exif_orientation) {
    case 2:  // mirror
      flip(&x0, &x1);
      break;
    case 3:  // rotate 180
      flip(&x0, &x1);
      flip(&y0, &y1);
      break;
    case 4:  // flip vertical
      flip(&y0, &y1);
      break;
    case 5:  // transpose: out (x, y) = in (y, x)
      std::swap(x0, y0);
      std::swap(x1, y1);
      break;
    case 6:  // rotate 90 clockwise: out x = 1 - in y, out y = in x
      std::swap(x0, y0);
      std::swap(x1, y1);
      flip(&x0, &x1);
      break;
    case 7:  // transverse: out x = 1 - in y, out y = 1 - in x
      std::swap(x0, y0);
      std::swap(x1, y1);
      flip(&x0, &x1);
      flip(&y0, &y1);
      break;
    case 8:  // rotate 90 counter-clockwise: out x = in y, out y = 1 - in x
      std::swap(x0, y0);
      std::swap(x1, y1);
      flip(&y0, &y1);
      break;
    default:
      break;
  }
  return Box{x0, y0, x1, y1};
}

}  // namespace libshard::image
