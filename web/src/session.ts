export interface SessionInfo {
  user: { id: string; email: string; hasPassword: boolean; accountId: string };
  account: { id: string; name: string; monthlyQuota: number | null };
  csrfToken: string;
  expiresAt: string;
  /** `capture` = a development server: the dashboard offers shortcuts such as "Mark verified". */
  delivery?: 'mx' | 'relay' | 'capture';
}
