import type { Route } from '../route.js';
import { campaignRoutes } from './campaigns.js';
import { explainRoutes } from './explain.js';
import { leadRoutes } from './leads.js';
import { metaRoutes } from './meta.js';
import { resultRoutes } from './results.js';
import { suppressionRoutes } from './suppressions.js';

// Every route of /api/v1, in the order the OpenAPI document lists them.

export const apiRoutes: readonly Route[] = [...campaignRoutes, ...leadRoutes, ...resultRoutes, ...suppressionRoutes, ...explainRoutes, ...metaRoutes(() => apiRoutes)];
