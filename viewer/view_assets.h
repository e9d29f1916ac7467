/* view_assets.h — the browser viewer's files, carried in srdc (view_assets.c is generated at
 * build time by viewer/view_assets.cmake from viewer/view.html, viewer/view.js and the pinned
 * three.js package). Each array ends in a NUL not counted in its length. */
#ifndef SRD_VIEW_ASSETS_H
#define SRD_VIEW_ASSETS_H

extern const unsigned char srd_asset_view_html[], srd_asset_view_js[], srd_asset_three_js[], srd_asset_orbit_js[],
    srd_asset_three_license[];
extern const unsigned long srd_asset_view_html_len, srd_asset_view_js_len, srd_asset_three_js_len,
    srd_asset_orbit_js_len, srd_asset_three_license_len;
extern const char srd_asset_three_version[];

#endif
