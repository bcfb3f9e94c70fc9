/** What the GNS3 GUI 2.2.59 sends for each drawing tool (gns3-gui-compat.md §2 Drawings). */
export const GUI_SVG = {
  note: `<svg width="78" height="24"><text font-family="TypeWriter" font-size="10.0" font-weight="bold" fill="#000000" fill-opacity="1.0">Hello note</text></svg>`,
  rectangle: `<svg width="200" height="100"><rect width="200" height="100" fill="#ffffff" fill-opacity="1.0" stroke-width="2" stroke="#000000" /></svg>`,
  ellipse: `<svg width="200.0" height="200.0"><ellipse cx="100" rx="100" cy="100" ry="100" fill="#ffffff" fill-opacity="1.0" stroke-width="2" stroke="#000000" /></svg>`,
  line: `<svg width="200" height="0"><line x1="0" x2="200" y1="0" y2="0" stroke-width="2" stroke="#000000" /></svg>`,
  image: `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="2" height="2">\n    <image width="2" height="2" xlink:href="data:image/png;base64,${"iVBORw0KGgo".repeat(60)}"/>\n    </svg>`,
};
